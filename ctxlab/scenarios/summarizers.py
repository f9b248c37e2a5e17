"""The `model.summarizer` section: which fake summarizer answers the summary requests.

Invariants:
- `kind` selects the model (default `fixed`); unknown keys are refused.
- `build(texts=, probes=, seed=)` makes the fake for one run: the extractive summarizer reads
  summaries written with the strategy's texts, may remember the workload's probes, and picks
  which ones with the scenario's seed.
- `fail_on` lists 1-based summarizer invocations of the run that fail (every structured-output
  attempt of a failing invocation fails), `fail_mode` how they fail, `window` the summarizer's
  own window (a request above it overflows).
- A fixed summarizer's `fields` may name only the five summary fields; the ones left out keep
  their defaults, so its answer always meets the default schema.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import ConfigDict, Field, field_validator

from ctxlab.core.messages.model import ChatModel
from ctxlab.core.world.retention import Probe
from ctxlab.inputs import InputModel
from ctxlab.models.extractive import ExtractiveSummarizer
from ctxlab.models.summarizers import FailMode, FixedSummarizer
from ctxlab.problems import unknown_name
from ctxlab.texts import SUMMARY_FIELDS, Texts

DEFAULT_FIELDS: dict[str, str] = {
    "task_overview": "The user's request, how success is judged, and every rule they stated.",
    "current_state": "The steps done so far and the files they changed.",
    "important_discoveries": "Constraints found, decisions taken, and errors met and fixed.",
    "next_steps": "The remaining steps, in order.",
    "context_to_preserve": "User preferences, promises made, and work still running.",
}
"""The fixed summarizer's default answer: short, and the same in every run."""


class FailureSpec(InputModel):
    """How and when a fake summarizer fails (shared by every kind)."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    fail_on: list[int] = Field(
        default_factory=list,
        description="1-based summarizer invocations of the run that fail (all their attempts).",
    )
    fail_mode: FailMode = Field(
        default="no_tool_call",
        description="How a failing invocation fails: no_tool_call, empty, malformed, missing_field "
        "(structured-output errors: AgentScope tries again), raise (a provider error), overflow. To a "
        "free-text request, no_tool_call answers blank text and empty, malformed and missing_field "
        "answer no text; each family treats those as its package does (README, Summarizers).",
    )
    window: int | None = Field(
        default=None, gt=0, description="The summarizer's own window in tokens; a larger request overflows."
    )

    @field_validator("fail_on")
    @classmethod
    def _positive(cls, value: list[int]) -> list[int]:
        if any(k < 1 for k in value):
            raise ValueError(f"{value} has a value below 1; invocations are counted from 1")
        twice = sorted({k for k in value if value.count(k) > 1})
        if twice:  # most likely a typo for another invocation
            raise ValueError(f"{value} lists {twice[0]} more than once; list each invocation once")
        return value


class FixedSummarizerSpec(FailureSpec):
    """A summarizer that answers every summary request with the same field texts."""

    kind: Literal["fixed"] = "fixed"
    fields: dict[str, str] = Field(
        default_factory=dict,
        description="Texts of the five summary fields; fields left out keep a short default.",
    )
    text: str | None = Field(
        default=None,
        description="The answer to every free-text summary request (OpenHands' condenser, LangChain's "
        "summary), verbatim. None: the fields rendered as text. What a blank text leads to is the "
        "family's: an empty summary (langchain-summary, deepagents), the blank summary (openhands, "
        "google-adk; strands unless it is empty, which fails the run), or a failed summary "
        "(pydantic-ai-summary after asking once more, nonoka and the lab's own families).",
    )

    @field_validator("fields")
    @classmethod
    def _known_fields(cls, value: dict[str, str]) -> dict[str, str]:
        unknown = [key for key in value if key not in SUMMARY_FIELDS]
        if unknown:
            raise ValueError(unknown_name("summary field", unknown[0], SUMMARY_FIELDS))
        return value

    def build(self, *, texts: Texts, probes: Sequence[Probe], seed: int) -> ChatModel:
        """The fake summarizer (texts, probes and seed play no part)."""
        return FixedSummarizer(
            fields={**DEFAULT_FIELDS, **self.fields},
            fail_on=frozenset(self.fail_on),
            fail_mode=self.fail_mode,
            window=self.window,
            text=self.text,
            requests=None,
        )


class ExtractiveSummarizerSpec(FailureSpec):
    """A summarizer that fills the five fields from the compressed messages: user requests, calls
    and files seen, errors, open tasks, and the planted probes it remembers (docs/architecture.md,
    Fake models)."""

    kind: Literal["extractive"]
    fact_recall: float = Field(default=1.0, ge=0, le=1, description="Share of planted facts it keeps.")
    rule_recall: float = Field(default=1.0, ge=0, le=1, description="Share of planted rules it keeps.")
    artifact_recall: float = Field(
        default=1.0, ge=0, le=1, description="Share of planted artifacts it keeps."
    )
    field_chars: int = Field(default=800, ge=1, description="Each field's cap in characters.")

    def build(self, *, texts: Texts, probes: Sequence[Probe], seed: int) -> ChatModel:
        """The fake summarizer for one run: the workload's probes, the scenario's seed."""
        return ExtractiveSummarizer.for_texts(
            texts,
            probes=tuple(probes),
            fact_recall=self.fact_recall,
            rule_recall=self.rule_recall,
            artifact_recall=self.artifact_recall,
            seed=seed,
            field_chars=self.field_chars,
            fail_on=frozenset(self.fail_on),
            fail_mode=self.fail_mode,
            window=self.window,
            requests=None,
        )
