"""Running presets through the engine in tests: one call, its outcome and its cache meter."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ctxlab.core.messages.blocks import Part, TextBlock, ToolResultBlock
from ctxlab.core.messages.message import Message
from ctxlab.core.messages.tokens import AgentScopeEstimator
from ctxlab.core.wire.protocol import Violation
from ctxlab.core.world.script import Script, ScriptedCall, ScriptedRound, ScriptedTurn, assign_call_ids
from ctxlab.engine.cache import PromptCacheMeter
from ctxlab.engine.hooks import BuiltinTool, RunSettings, Strategy
from ctxlab.engine.loop import RunOutcome
from ctxlab.engine.session import run_script
from ctxlab.engine.workspace import InMemoryWorkspace
from ctxlab.models.scripted import ScriptModel
from ctxlab.models.summarizers import FailMode, FixedSummarizer
from ctxlab.presets.registry import PRESETS
from ctxlab.texts import CTXLAB_TEXTS
from ctxlab.workloads.build import schemas

COUNTER = AgentScopeEstimator()
FIELDS = {
    "task_overview": "Fix the parser.",
    "current_state": "Tests run.",
    "important_discoveries": "Port 5432.",
    "next_steps": "Commit.",
    "context_to_preserve": "No Co-Authored-By.",
}
TOOLS = schemas("Read", "grep", "bash", "retrieve")


@dataclass(frozen=True, slots=True)
class Ran:
    """A finished run, its meter, workspace and summarizer."""

    outcome: RunOutcome
    meter: PromptCacheMeter
    workspace: InMemoryWorkspace
    summarizer: FixedSummarizer
    model: ScriptModel

    def reasoning(self) -> list[int]:
        """Input tokens of each reasoning call."""
        return [c.tokens["as_sent"] for c in self.outcome.calls if c.kind == "reasoning"]

    def total(self) -> int:
        """Input tokens of every call."""
        return sum(c.tokens["as_sent"] for c in self.outcome.calls)

    def events(self) -> list[str]:
        """Every event of the run as the results show it (`kind` or `kind:detail`), in order."""
        return [str(e) for c in self.outcome.calls for e in c.events]

    def violations(self, preset: str = "") -> list[str]:
        """Every protocol violation of the run, but those `preset`'s source commits by design
        (`strategy_caused`)."""
        found = [v for c in self.outcome.calls for v in c.violations]
        return strategy_caused(found, preset)

    def sent(self) -> list[tuple[Message, ...]]:
        """The messages of each reasoning request the model received."""
        return [r.messages for r in self.model.requests]


def run(
    strategy: Strategy,
    script: Script,
    *,
    window: int = 200_000,
    fail_on: Sequence[int] = (),
    fail_mode: FailMode = "no_tool_call",
    workspace: bool = True,
    max_iters: int = 200,
    builtins: Mapping[str, BuiltinTool] | None = None,
    record_requests: bool = False,
) -> Ran:
    """Run `script` (ids assigned here) through `strategy` with the fixed summarizer."""
    script = assign_call_ids(script)
    meter = PromptCacheMeter(COUNTER)
    model = ScriptModel(script)
    summarizer = FixedSummarizer(fields=FIELDS, fail_on=frozenset(fail_on), fail_mode=fail_mode)
    files = InMemoryWorkspace()
    outcome = run_script(
        script,
        strategy,
        model=model,
        summarizer=summarizer,
        texts=CTXLAB_TEXTS,
        context_size=window,
        workspace=files if workspace else None,
        settings=RunSettings(
            max_iters=max_iters,
            max_iters_hint=CTXLAB_TEXTS.max_iters_hint,
            max_iters_source=CTXLAB_TEXTS.max_iters_source,
        ),
        cache=meter,
        builtins=builtins,
        record_requests=record_requests,
        subagent_model=ScriptModel,  # generators that delegate run their sub-tasks in sub-agents
    )
    return Ran(outcome=outcome, meter=meter, workspace=files, summarizer=summarizer, model=model)


def text(size: int, tag: str = "r") -> tuple[Part, ...]:
    """One text part of `size` ASCII bytes (size // 4 tokens when size is a multiple of 4)."""
    return (TextBlock(text=(tag * size)[:size]),)


def lines(count: int, width: int = 79, tag: str = "l") -> tuple[Part, ...]:
    """`count` lines of `width` bytes joined by newlines."""
    return (TextBlock(text="\n".join((f"{tag}{k:05d}" * width)[:width] for k in range(count))),)


def tool_call(
    tool: str, arguments: str, result: tuple[Part, ...] | None, error: bool = False
) -> ScriptedCall:
    """A scripted call."""
    return ScriptedCall(tool=tool, input=arguments, result=result, error=error)


def one_turn(
    *rounds: ScriptedRound, system: str = "You are a careful agent.", user: str = "Do it."
) -> Script:
    """A script of one turn of `rounds`."""
    turn = ScriptedTurn(user=(TextBlock(text=user),), rounds=rounds, final="Done.")
    return Script(system_prompt=system, tools=TOOLS, turns=(turn,))


def turns(*rounds_per_turn: tuple[ScriptedRound, ...], system: str = "You are a careful agent.") -> Script:
    """A script of several turns."""
    made = tuple(
        ScriptedTurn(user=(TextBlock(text=f"Question {t}."),), rounds=rounds, final=f"Answer {t}.")
        for t, rounds in enumerate(rounds_per_turn)
    )
    return Script(system_prompt=system, tools=TOOLS, turns=made)


def results_of(ran: Ran) -> list[ToolResultBlock]:
    """The result blocks of the final stored context, in order."""
    return [b for m in ran.outcome.state.context for b in m.blocks if isinstance(b, ToolResultBlock)]


def strategy_caused(found: Sequence[Violation], preset: str) -> list[str]:
    """The violations a preset's requests may not have: all, but Bedrock's user-first rule and
    the tools a request must offer where its source breaks them by design
    (`Preset.assistant_first`, `Preset.undeclared_tools`)."""
    info = PRESETS.get(preset)
    allowed = {
        kind
        for kind, declared in (
            ("assistant_first", info and info.assistant_first),
            ("undeclared_tools", info and info.undeclared_tools),
        )
        if declared
    }
    return [str(v) for v in found if v.kind not in allowed]
