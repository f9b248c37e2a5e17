"""The registry-built fields of a scenario (a strategy entry, a summarizer) and the `delegate:`
section, which uses both.

Invariants:
- `StrategyField` validates an entry by its preset's own model, loaded the first time an entry
  names it (`ctxlab.presets.registry`), and dumps it by that model; an entry without a known
  preset is validated by the common model, which says what is missing. `SummarizerField` is a
  union of the summarizer kinds told apart by `kind` (default `fixed`). A new preset or
  summarizer needs no change here.
- `delegate:` describes how sub-agents run (the sub-tasks a scripted call delegates): a setting
  left out is the parent's, so a scenario without the section runs its sub-agents exactly as
  before it existed (and its runs keep their config hashes: the section is in a run's config
  only when written).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Union

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    SerializeAsAny,
    Tag,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    WrapValidator,
    field_validator,
)

from ctxlab.inputs import InputModel
from ctxlab.presets.entries import StrategyEntry
from ctxlab.presets.registry import ENTRIES
from ctxlab.problems import located_error
from ctxlab.scenarios.registry import SUMMARIZERS, preset_problem, summarizer_problem

if TYPE_CHECKING:
    from ctxlab.scenarios.summarizers import ExtractiveSummarizerSpec, FixedSummarizerSpec


def _tagger(field: str, default: str | None = None) -> Any:
    def tag(value: Any) -> str | None:
        if isinstance(value, dict):
            found = value.get(field, default)
            return found if isinstance(found, str) else None
        return getattr(value, field, None)

    return tag


def _registry_union(models: dict[str, type[BaseModel]], field: str, default: str | None = None) -> Any:
    """The models of a registry as one union told apart by `field` (the model itself when alone)."""
    if len(models) == 1:
        return next(iter(models.values()))
    members = tuple(Annotated[model, Tag(name)] for name, model in models.items())
    forms = " or ".join(f"{{{field}: {name}}}" for name in models)
    told = Discriminator(
        _tagger(field, default),
        custom_error_type="ctxlab_form",
        custom_error_message=f"expected a mapping such as {forms}",
    )
    return Annotated[Union[members], told]  # noqa: UP007 (built at run time)


def _by_preset(value: Any, handler: ValidatorFunctionWrapHandler, info: ValidationInfo) -> Any:
    """A strategy entry as its preset's model (the common model without a known preset)."""
    preset = value.get("preset") if isinstance(value, dict) else None
    if isinstance(preset, str) and preset in ENTRIES:
        return ENTRIES[preset].model_validate(value, context=info.context)
    return handler(value)


if TYPE_CHECKING:
    StrategyField = StrategyEntry
    SummarizerField = FixedSummarizerSpec | ExtractiveSummarizerSpec
else:
    StrategyField = Annotated[SerializeAsAny[StrategyEntry], WrapValidator(_by_preset)]
    SummarizerField = _registry_union({s.name: s.params for s in SUMMARIZERS.values()}, "kind", "fixed")


class DelegateSpec(InputModel):
    """How sub-agents run: their own strategy, window and summarizer (each the parent's when left
    out). Every sub-agent of the run, nested ones included, runs with these settings."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    strategy: StrategyField | None = Field(
        default=None,
        description="The sub-agents' strategy entry (any preset, with its settings); default: the "
        "parent's. Sub-agents share their parent's workspace: the parent's `workspace` holds for them, "
        "not this entry's.",
    )
    context_size: int | None = Field(
        default=None, gt=0, description="The sub-agents' window in tokens; default: model.context_size."
    )
    summarizer: SummarizerField | None = Field(
        default=None, description="The sub-agents' fake summarizer; default: model.summarizer."
    )

    @field_validator("strategy", "summarizer", mode="before")
    @classmethod
    def _known_names(cls, value: Any, info: Any) -> Any:
        if not isinstance(value, dict):
            return value
        if info.field_name == "strategy":
            problem, field = preset_problem(value.get("preset")), "preset"
        else:
            problem, field = summarizer_problem(value.get("kind", "fixed")), "kind"
        if problem:
            raise located_error("DelegateSpec", [((field,), problem, value.get(field))])
        return value
