"""Fake summarizers: models that answer summary requests, and the ways they fail.

Invariants:
- A summarizer answers with a `generate_structured_output` call holding the five fields as JSON
  when the request offers that tool, and with the fields as free text when it offers no tool
  (the summary requests of the LangChain, OpenHands and nonoka families), unless the request's
  summarizer invocation is listed in `fail_on` (1-based, counting invocations of the run; every
  attempt of a failing invocation fails). To a free-text request `no_tool_call` answers blank
  text and `empty`, `malformed` and `missing_field` an answer with no text; whether that is a
  failed summary is the caller's rule (`Env.summarize_text`'s `failure`), as each family's
  package decides.
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

from ctxlab.core.agentscope.summary import SUMMARY_TOOL
from ctxlab.core.messages.blocks import TextBlock, ToolCallBlock
from ctxlab.core.messages.model import ContextOverflowError, ModelError, ModelRequest, ModelResponse

FailMode = Literal["no_tool_call", "empty", "malformed", "missing_field", "raise", "overflow"]
FIELDS = ("task_overview", "current_state", "important_discoveries", "next_steps", "context_to_preserve")


def summary_text_of(fields: Mapping[str, str]) -> str:
    r"""The fields as a free-text summary: one `Heading: text` paragraph per field.

    >>> summary_text_of({"task_overview": "Fix the bug.", "next_steps": "Test."})
    'Task overview: Fix the bug.\n\nNext steps: Test.'
    """
    return "\n\n".join(f"{k.replace('_', ' ').capitalize()}: {v}" for k, v in fields.items())


def answer_with(fields: Mapping[str, str], request: ModelRequest) -> ModelResponse:
    """A structured-output call when the request offers the schema tool, else free text."""
    if request.tools:
        return summary_call(fields)
    return ModelResponse(blocks=(TextBlock(text=summary_text_of(fields)),))


def summary_call(fields: Mapping[str, str], call_id: str = "summary") -> ModelResponse:
    """A structured-output answer with `fields`."""
    payload = json.dumps(dict(fields), ensure_ascii=False)
    return ModelResponse(blocks=(ToolCallBlock(id=call_id, name=SUMMARY_TOOL, input=payload),))


def failed_answer(mode: FailMode, request: ModelRequest) -> ModelResponse:
    """The answer (or the exception) of a failing summary attempt."""
    match mode:
        case "no_tool_call":
            text = "I cannot produce that." if request.tools else " "
            return ModelResponse(blocks=(TextBlock(text=text),))
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


def scheduled_failure(
    request: ModelRequest, *, fail_on: frozenset[int], fail_mode: FailMode, window: int | None
) -> ModelResponse | None:
    """The failing answer `request` gets (over `window`, or an invocation in `fail_on`), or None.

    Raises:
        ModelError: the failure is `raise`, or the request overflows `window`.
    """
    if window is not None and request.input_tokens > window:
        return failed_answer("overflow", request)
    if request.invocation in fail_on:
        return failed_answer(fail_mode, request)
    return None


@dataclass(slots=True)
class FixedSummarizer:
    """Answers every summary request with the given field texts."""

    fields: Mapping[str, str]
    fail_on: frozenset[int] = frozenset()
    fail_mode: FailMode = "no_tool_call"
    window: int | None = None
    text: str | None = None
    # The requests answered, in order, for inspection; None keeps none, as a run does: each
    # request holds its whole context, so keeping them all costs O(calls x context) memory.
    requests: list[ModelRequest] | None = field(default_factory=list)

    def respond(self, request: ModelRequest) -> ModelResponse:
        """The fixed summary (`text` verbatim for a free-text request when given), or a failure
        on the listed invocations or over the window."""
        if self.requests is not None:
            self.requests.append(request)
        failed = scheduled_failure(
            request, fail_on=self.fail_on, fail_mode=self.fail_mode, window=self.window
        )
        if failed is not None:
            return failed
        if self.text is not None and not request.tools:
            return ModelResponse(blocks=(TextBlock(text=self.text),))
        return answer_with(self.fields, request)

    def params(self) -> dict[str, object]:
        """The summarizer's parameters, for results."""
        return {
            "kind": "fixed",
            "fail_on": sorted(self.fail_on),
            "fail_mode": self.fail_mode,
            "window": self.window,
            "text": self.text,
        }
