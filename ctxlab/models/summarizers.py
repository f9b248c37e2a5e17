"""Fake summarizers: models that answer summary requests, and the ways they fail.

Invariants:
- A summarizer answers with a `generate_structured_output` call holding the five fields as JSON,
  unless the request's summarizer invocation is listed in `fail_on` (1-based, counting
  invocations of the run; every attempt of a failing invocation fails).
- Failure modes: `no_tool_call` (text instead of the call), `empty` (no blocks at all),
  `malformed` (the call's input is not JSON), `missing_field` (a required field is absent) — all
  structured-output errors, so AgentScope's attempt ladder moves on — and `raise` (a provider
  error, no further attempts) and `overflow` (the request exceeds the summarizer's own window).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from ctxlab.core.blocks import TextBlock, ToolCallBlock
from ctxlab.core.model import ContextOverflowError, ModelError, ModelRequest, ModelResponse
from ctxlab.core.summary import SUMMARY_TOOL

FailMode = Literal["no_tool_call", "empty", "malformed", "missing_field", "raise", "overflow"]
FIELDS = ("task_overview", "current_state", "important_discoveries", "next_steps", "context_to_preserve")


def summary_call(fields: Mapping[str, str], call_id: str = "summary") -> ModelResponse:
    """A structured-output answer with `fields`."""
    payload = json.dumps(dict(fields), ensure_ascii=False)
    return ModelResponse(blocks=(ToolCallBlock(id=call_id, name=SUMMARY_TOOL, input=payload),))


def failed_answer(mode: FailMode, request: ModelRequest) -> ModelResponse:
    """The answer (or the exception) of a failing summary attempt."""
    match mode:
        case "no_tool_call":
            return ModelResponse(blocks=(TextBlock(text="I cannot produce that."),))
        case "empty":
            return ModelResponse()
        case "malformed":
            return ModelResponse(
                blocks=(ToolCallBlock(id="summary", name=SUMMARY_TOOL, input="{task_overview:"),)
            )
        case "missing_field":
            return summary_call({"task_overview": "partial"})
        case "raise":
            raise ModelError(f"summarizer unavailable (invocation {request.invocation})")
        case "overflow":
            raise ContextOverflowError(
                f"summary request of {request.input_tokens} tokens overflows the window"
            )


@dataclass(slots=True)
class FixedSummarizer:
    """Answers every summary request with the given field texts."""

    fields: Mapping[str, str]
    fail_on: frozenset[int] = frozenset()
    fail_mode: FailMode = "no_tool_call"
    window: int | None = None
    requests: list[ModelRequest] = field(default_factory=list)

    def respond(self, request: ModelRequest) -> ModelResponse:
        """The fixed summary, or a failure on the listed invocations or over the window."""
        self.requests.append(request)
        if self.window is not None and request.input_tokens > self.window:
            return failed_answer("overflow", request)
        if request.invocation in self.fail_on:
            return failed_answer(self.fail_mode, request)
        return summary_call(self.fields)

    def params(self) -> dict[str, object]:
        """The summarizer's parameters, for results."""
        return {
            "kind": "fixed",
            "fail_on": sorted(self.fail_on),
            "fail_mode": self.fail_mode,
            "window": self.window,
        }
