"""A preset: a named family of settings with its source's defaults, and how to build its strategy.

Every preset is described the same way and listed in `ctxlab.presets.registry`: its name, a
one-line summary, the source it follows (package and version), its frozen parameter dataclass
with that source's defaults, and `build(params, texts)`, which makes the engine `Strategy`.

Its scenario entry is generated from the parameter dataclass (`ctxlab.presets.entries`), unless
the source's own configuration has a shape worth keeping: then `entry` is a hand-written entry
model and `from_entry` turns a validated entry into the parameters (the `agentscope` preset,
whose entry nests AgentScope's `ContextConfig` and `InjectionConfig` as AgentScope names them).

Invariants:
- `params()` are the source's defaults; `strategy()` builds with them and the lab's texts.
- `entry` and `from_entry` are given together or not at all.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ctxlab.engine.hooks import Strategy
from ctxlab.texts import CTXLAB_TEXTS, Texts

P = TypeVar("P")

NO_SYSTEM_MESSAGE = "no system message"
"""What most presets send for a workload with no system prompt."""
EMPTY_SYSTEM_MESSAGE = "an empty system message"

UNSENT_THINKING = (
    "a model's thinking is not sent back: the lab's OpenAI chat requests have no place for it, so "
    "neither requests nor input_tokens hold it"
)
"""The reasoning note of a preset whose requests are the lab's own OpenAI chat form."""
"""What a preset whose framework always writes its system message sends instead."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Preset(Generic[P]):
    """A named preset.

    Attributes:
        name: the name scenarios and `ctxlab presets` use.
        summary: what it does, in one line.
        source: the package, version and modules it follows.
        params: its frozen parameter dataclass; `params()` is the source's defaults.
        build: the strategy from parameters and the run's texts.
        notes: what a results manifest says of it (declared deviations, for example).
        assistant_first: how its source may start a request with an assistant turn, which
            Bedrock's Converse API refuses (the `bedrock` rule reports it); empty when it never
            does. `remarks` adds it to the notes.
        undeclared_tools: how its source may send tool calls or results in a request that
            offers no tools, which the Anthropic Messages and Bedrock Converse APIs refuse (the
            `anthropic` and `bedrock` rules report it); empty when it never does. `remarks` adds
            it to the notes.
        entry: a hand-written scenario entry model, or None to generate one from `params`.
        from_entry: the parameters of a validated hand-written entry.
        peers: the installed distributions it is proven against call for call, in the lab's
            environment (`ctxlab presets -v` prints their versions); empty when none is.
        no_system: what its requests carry for a workload with no system prompt, as
            `ctxlab presets -v` says it (the strategy's `system_prompt("")` does it).
        loop_limit: its framework's own rounds per reply, the default of its entries'
            `react.max_iters` (a generated entry's); None: AgentScope's 50.
    """

    name: str
    summary: str
    source: str
    params: type[P]
    build: Callable[[P, Texts], Strategy]
    notes: tuple[str, ...] = ()
    entry: type | None = None
    from_entry: Callable[[Any], P] | None = None
    peers: tuple[str, ...] = ()
    assistant_first: str = ""
    undeclared_tools: str = ""
    no_system: str = NO_SYSTEM_MESSAGE
    loop_limit: int | None = None

    def __post_init__(self) -> None:
        if (self.entry is None) != (self.from_entry is None):
            raise ValueError(f"preset {self.name!r}: give `entry` and `from_entry` together")
        if self.entry is not None and self.loop_limit is not None:
            raise ValueError(f"preset {self.name!r}: a hand-written entry sets its own react default")

    @property
    def remarks(self) -> tuple[str, ...]:
        """The notes, then how a request may start with an assistant turn, then how one may hold
        tool blocks without offering tools."""
        remarks = self.notes
        if self.assistant_first:
            bedrock = (
                "Bedrock refuses such a request: it counts in violations_bedrock, reproduced, not repaired"
            )
            remarks += (f"{self.assistant_first}; {bedrock}",)
        if self.undeclared_tools:
            refused = (
                "the Anthropic and Bedrock APIs refuse tool calls and results in a request that offers no "
                "tools: it counts in violations_anthropic and violations_bedrock, reproduced, not repaired"
            )
            remarks += (f"{self.undeclared_tools}; {refused}",)
        return remarks

    def defaults(self) -> dict[str, Any]:
        """The default parameters as plain values; one without a default is "(required)"."""
        if not dataclasses.is_dataclass(self.params):
            return {}
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self.params):
            if f.default is not dataclasses.MISSING:
                value: Any = f.default
            elif f.default_factory is not dataclasses.MISSING:
                value = f.default_factory()
            else:
                out[f.name] = "(required)"  # the source has no default: the scenario gives it
                continue
            is_instance = dataclasses.is_dataclass(value) and not isinstance(value, type)
            out[f.name] = dataclasses.asdict(value) if is_instance else value
        return out

    def describe(self) -> str:
        """One line: the name, the summary and the source."""
        return f"{self.name}: {self.summary} (source: {self.source})"

    def strategy(self, params: P | None = None, texts: Texts | None = None) -> Strategy:
        """The strategy with `params` (default: the source's) and `texts` (default: ctxlab's)."""
        return self.build(self.params() if params is None else params, texts or CTXLAB_TEXTS)
