"""The `model.summarizer` section: which fake summarizer answers the summary requests.

Invariants:
- `kind` selects the model (default `fixed`); unknown keys are refused.
- `fail_on` lists 1-based summarizer invocations of the run that fail (every structured-output
  attempt of a failing invocation fails), `fail_mode` how they fail, `window` the summarizer's
  own window (a request above it overflows).
- A fixed summarizer's `fields` may name only the five summary fields; the ones left out keep
  their defaults, so its answer always meets the default schema.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ctxlab.models.summarizers import FailMode, FixedSummarizer
from ctxlab.scenarios.config import SUMMARY_FIELDS
from ctxlab.workloads.problems import did_you_mean

DEFAULT_FIELDS: dict[str, str] = {
    "task_overview": "The user's request, how success is judged, and every rule they stated.",
    "current_state": "The steps done so far and the files they changed.",
    "important_discoveries": "Constraints found, decisions taken, and errors met and fixed.",
    "next_steps": "The remaining steps, in order.",
    "context_to_preserve": "User preferences, promises made, and work still running.",
}
"""The fixed summarizer's default answer: short, and the same in every run."""


class FixedSummarizerSpec(BaseModel):
    """A summarizer that answers every summary request with the same field texts."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["fixed"] = "fixed"
    fields: dict[str, str] = Field(
        default_factory=dict,
        description="Texts of the five summary fields; fields left out keep a short default.",
    )
    fail_on: list[int] = Field(
        default_factory=list,
        description="1-based summarizer invocations of the run that fail (all their attempts).",
    )
    fail_mode: FailMode = Field(
        default="no_tool_call",
        description="How a failing invocation fails: no_tool_call, empty, malformed, missing_field "
        "(structured-output errors: AgentScope tries again), raise (a provider error), overflow.",
    )
    window: int | None = Field(
        default=None, gt=0, description="The summarizer's own window in tokens; a larger request overflows."
    )

    @field_validator("fields")
    @classmethod
    def _known_fields(cls, value: dict[str, str]) -> dict[str, str]:
        unknown = [key for key in value if key not in SUMMARY_FIELDS]
        if unknown:
            key = unknown[0]
            raise ValueError(
                f"unknown summary field {key!r}{did_you_mean(key, SUMMARY_FIELDS)}; "
                f"the fields are {', '.join(SUMMARY_FIELDS)}"
            )
        return value

    @field_validator("fail_on")
    @classmethod
    def _positive(cls, value: list[int]) -> list[int]:
        if any(k < 1 for k in value):
            raise ValueError(f"{value} has a value below 1; invocations are counted from 1")
        return value

    def build(self) -> FixedSummarizer:
        """The fake summarizer."""
        return FixedSummarizer(
            fields={**DEFAULT_FIELDS, **self.fields},
            fail_on=frozenset(self.fail_on),
            fail_mode=self.fail_mode,
            window=self.window,
        )
