"""Strategies as ordered steps: how most presets are built and composed.

A `Step` is one family's work at the engine's hook points: a stored edit before each call
(`compress`: summaries, eviction, persisted clearing), a request-only edit (`edit`: masking,
clearing that is not persisted, windows, prompt-only trimming), a per-result step
(`on_tool_result`: offloading large results), and tools it adds. A `StepStrategy` runs its steps
in order at each hook, so any steps compose (masking + summary, as the Complexity Trap's hybrid).

Invariants:
- `compress` runs the steps' stored edits in order, then works out what the request-only edits
  (in order, each on the previous one's output) will clear from the next request. A step's event
  (`cleared`, `dropped`, `trimmed`, ...) is recorded on a call whose request clears something
  the previous request showed: a request-only edit applied anew to every request is not a new
  event each time. The cleared keys are kept in the `view` memo only when they change, so the
  state changes only when the request does.
- `view` applies the request-only edits to the stored context; it returns `state.context`
  itself when no step edits requests. It is pure: the same state gives the same request.
- Every compaction a step reports is judged (`ctxlab.engine.progress`): a flagged one adds a
  `loop_warning`; after `futile_limit` consecutive flagged compactions the steps marked
  `stoppable` are skipped (`compaction_stopped` is recorded once) until a new user turn re-arms
  them. The prompt-only steps keep every request within bounds meanwhile.
- Steps keep their own values in the state's memos under their `key`, so a compression that
  updates them is all or nothing with the rest of the state.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ctxlab.core.agentscope.compress import fixed_messages
from ctxlab.core.agentscope.summary import Summary
from ctxlab.core.compaction.clearing import Clearing
from ctxlab.core.compaction.progress import (
    FUTILE_COMPACTION_LIMIT,
    Breaker,
    ProgressParams,
    assess_compaction,
)
from ctxlab.core.events import EventKind
from ctxlab.core.messages.blocks import ToolResultBlock
from ctxlab.core.messages.latest import Picked, Unseen
from ctxlab.core.messages.memo import RESUMED_BLOCKS, LeadingConcat
from ctxlab.core.messages.message import Message
from ctxlab.core.messages.sizes import (
    Sizer,
)
from ctxlab.core.messages.tokens import measure_all
from ctxlab.core.messages.tools import ToolSchema
from ctxlab.core.messages.units import ViewUnit, placed_units
from ctxlab.engine.env import Env, RequestCounter
from ctxlab.engine.hooks import BuiltinTool, Frame, KeptAnswer, StandIn
from ctxlab.engine.middleware import CompressRequest
from ctxlab.engine.progress import flag_progress
from ctxlab.engine.state import EpisodeState, memo, with_context, with_memo
from ctxlab.engine.trace import CompressionRecord

VIEW_KEY = "view"
PROGRESS_KEY = "progress"


@dataclass(frozen=True, slots=True, kw_only=True)
class Compaction:
    """What a compacting step did, in request tokens: before and after it, the floor no compaction
    can go below (system prompt, tools, summary, the tail it must keep), and its trigger."""

    before: int
    after: int
    floor: int
    trigger: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Stepped:
    """A step's new state, and its compaction when it compacted."""

    state: EpisodeState
    compaction: Compaction | None = None


ClearedKeys = tuple[str, ...] | frozenset[str]
"""Keys of what a request-only edit cleared or dropped: a tuple in order, or a set."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Edit:
    """A request-only edit: the messages sent, and keys of what it cleared or dropped."""

    messages: tuple[Message, ...]
    cleared: ClearedKeys = ()


class Step:
    """A step that does nothing at any hook; families override what they do.

    Class attributes: `key` names the step's memo; `event` is recorded when its request-only
    edit clears something new; `edits` says it has a request-only edit; `stoppable` lets the
    futile-compaction breaker skip its `compress`.
    """

    __slots__ = ()
    key: ClassVar[str] = "step"
    event: ClassVar[EventKind] = EventKind.CLEARED
    edits: ClassVar[bool] = False
    stoppable: ClassVar[bool] = False

    def compress(self, state: EpisodeState, env: Env, frame: Frame) -> Stepped:
        """The stored edit before a call."""
        return Stepped(state=state)

    def compress_each(self, state: EpisodeState, env: Env, frame: Frame) -> Iterator[Stepped]:
        """`compress` as the compactions it makes, one at a time, the last state last: a step
        that condenses several times before one call (each condensation a step of the framework's
        own) yields each as it is made, so each is judged before the next summary call."""
        yield self.compress(state, env, frame)

    def edit(self, messages: tuple[Message, ...], state: EpisodeState, env: Env, frame: Frame) -> Edit:
        """The request-only edit of `messages` (the context as the previous steps left it)."""
        return Edit(messages=messages)

    def on_tool_result(self, state: EpisodeState, result: ToolResultBlock, env: Env) -> ToolResultBlock:
        """The result as saved."""
        return result

    def tools(self, tools: tuple[ToolSchema, ...]) -> tuple[ToolSchema, ...]:
        """The tools sent, after this step's additions."""
        return tools

    def ledger_text(self, state: EpisodeState) -> str:
        """A ledger the step keeps beside the context ('' when none)."""
        return ""


class PersistableClearing(Step):
    """A clearing family's step: each request is cleared from the full history (request-only, as
    the providers' own context editing does), or, with `persist`, the clearing edits the stored
    history. Subclasses say how to clear (`clear`) and what their trigger is (`trigger`)."""

    __slots__ = ()
    edits: ClassVar[bool] = True

    @property
    def persist(self) -> bool:
        """Whether the clearing is kept in the stored history."""
        raise NotImplementedError

    @property
    def trigger(self) -> int:
        """The request size (tokens) the clearing waits for."""
        raise NotImplementedError

    def clear(self, messages: tuple[Message, ...], sizer: Sizer) -> Clearing:
        """The family's clearing of `messages`."""
        raise NotImplementedError

    def compress(self, state: EpisodeState, env: Env, frame: Frame) -> Stepped:
        """With `persist`, the clearing edits the stored history."""
        if not self.persist:
            return Stepped(state=state)
        cleared = self.clear(state.context, request_sizer(state, env, frame))
        if not cleared.cleared:
            return Stepped(state=state)
        env.recorder.event(EventKind.CLEARED)
        done = Compaction(
            before=cleared.tokens_before,
            after=cleared.tokens_after,
            floor=cleared.tokens_after,
            trigger=self.trigger,
        )
        return Stepped(state=with_context(state, cleared.messages, env.counter), compaction=done)

    def edit(self, messages: tuple[Message, ...], state: EpisodeState, env: Env, frame: Frame) -> Edit:
        """Without `persist`, each request is cleared anew from the full history."""
        if self.persist:
            return Edit(messages=messages)
        cleared = self.clear(messages, request_sizer(state, env, frame))
        return Edit(messages=cleared.messages, cleared=cleared.cleared)


def unit_keys(messages: tuple[Message, ...], indices: tuple[int, ...]) -> tuple[str, ...]:
    """Names of view messages that stay the same while the stored history only grows: the stored
    message's id, the unit's first block and its kind, in the order of `indices` (the names of
    the histories last read are kept, `LeadingConcat`, and the last names picked, `Picked`, so
    naming what a window dropped, a little more at every call, costs what changed)."""
    return _picked_names(_unit_names(messages), indices)


def _message_unit_names(message: Message, position: int, before: int) -> tuple[str, ...]:
    units = placed_units(message, position, before)
    if len(units) >= RESUMED_BLOCKS:
        return _names_of_units(units, message.id)  # a reply's units grow with it
    return tuple(_unit_name(unit, 0, 0, message.id)[0] for unit in units)


def _unit_name(unit: ViewUnit, _at: int, _before: int, message_id: str) -> tuple[str]:
    return (f"{message_id}:{unit.start}:{unit.kind}",)


_unit_names = LeadingConcat[Message, str](_message_unit_names)
_picked_names = Picked[str]()
_names_of_units = LeadingConcat[ViewUnit, str](_unit_name)
_UNSEEN = Unseen[str]()
"""Whether a step's edit clears what the last request did not show."""


def request_sizer(state: EpisodeState, env: Env, frame: Frame) -> Sizer:
    """How a step sizes the request: the tools and the system prompt and summary as overhead."""
    overhead = measure_all(env.counter, fixed_messages(frame.system_prompt, state.summary))
    return Sizer(counter=env.counter, tools=frame.tools, overhead=overhead)


@dataclass(frozen=True, slots=True, kw_only=True)
class Shown:
    """What each step's request-only edit had cleared in the last request, by step key."""

    cleared: tuple[tuple[str, ClearedKeys], ...] = ()


NOTHING_SHOWN = Shown()


@dataclass(frozen=True, slots=True, kw_only=True)
class Guard:
    """The futile-compaction breaker and the turn it tripped in (re-armed by a new turn)."""

    breaker: Breaker = field(default_factory=lambda: Breaker(limit=FUTILE_COMPACTION_LIMIT))
    turn: int = -1

    def rearmed(self, turn: int) -> Guard:
        """A fresh breaker once the turn moved on since it tripped."""
        if self.breaker.tripped and turn != self.turn:
            return Guard(breaker=Breaker(limit=self.breaker.limit), turn=turn)
        return self


@dataclass(frozen=True, slots=True)
class StepStrategy:
    """A strategy made of steps, run in order at each hook (see the module invariants).

    Attributes:
        name: the strategy's name.
        steps: the steps in order.
        config: the preset's parameters (what `params()` and `describe()` report).
        source: what the preset follows.
        futile_limit: consecutive flagged compactions before the stoppable steps are skipped
            (0: never skip, only flag).
        progress: when a compaction counts as futile.
        request_counter: the family's own count of a request, recorded as `strategy_tokens`.
        iteration_limit: the framework's own limit of steps per reply, condensations included,
            after which the reply stops without a forced answer (None: the run's `max_iters`).
        kept_answer: how the framework stores a model's answer (None: as given; an empty answer
            stores nothing).
        finish_tool: a tool whose call, the last of its answer, ends the reply once it has run
            (the framework finishes without asking the model again); None: none does.
        empty_system: with an empty system prompt, the requests still carry an empty system
            message (the framework always writes one); False: they carry none.
        stand_in: an answer the framework gives in the model's place before a call (the reply
            then ends with it, no call made); None: the model is always called.
    """

    name: str
    steps: tuple[Step, ...]
    config: object = None
    source: str = "ctxlab"
    futile_limit: int = FUTILE_COMPACTION_LIMIT
    progress: ProgressParams = field(default_factory=ProgressParams)
    request_counter: RequestCounter | None = None
    iteration_limit: int | None = None
    kept_answer: KeptAnswer | None = None
    finish_tool: str | None = None
    empty_system: bool = False
    stand_in: StandIn | None = None

    def tools(self, script_tools: tuple[ToolSchema, ...]) -> tuple[ToolSchema, ...]:
        """The script's tools after every step's additions."""
        for step in self.steps:
            script_tools = step.tools(script_tools)
        return script_tools

    def system_prompt(self, base: str) -> str | None:
        """The base prompt; an empty one is no system message unless `empty_system`."""
        return base if base or self.empty_system else None

    def compress(self, state: EpisodeState, env: Env, frame: Frame, request: CompressRequest) -> EpisodeState:
        """Every step's stored edit in order, judged for progress, then the next request worked out."""
        stored = memo(state, PROGRESS_KEY, Guard(breaker=Breaker(limit=max(self.futile_limit, 1))))
        guard = stored.rearmed(state.turn)
        for step in self.steps:
            if step.stoppable and self.futile_limit and guard.breaker.tripped:
                continue
            for stepped in step.compress_each(state, env, frame):
                state = stepped.state
                if stepped.compaction is not None:
                    guard = self._judge(stepped.compaction, guard, state, env)
        if guard != stored:
            state = with_memo(state, PROGRESS_KEY, guard)
        return self._note_edits(state, env, frame) if any(s.edits for s in self.steps) else state

    def _judge(self, done: Compaction, guard: Guard, state: EpisodeState, env: Env) -> Guard:
        progress = assess_compaction(
            before=done.before, after=done.after, floor=done.floor, trigger=done.trigger, params=self.progress
        )
        flagged = flag_progress(env, progress, self.name)
        breaker = guard.breaker.record(not flagged)
        stops = self.futile_limit and any(s.stoppable for s in self.steps)
        if breaker.tripped and not guard.breaker.tripped and stops:
            env.recorder.event(EventKind.COMPACTION_STOPPED)
            env.recorder.warnings.append(
                f"call {env.recorder.next_call_index}: {self.name} stops compacting after "
                f"{breaker.limit} futile compactions in a row, until the next user turn"
            )
        return Guard(breaker=breaker, turn=state.turn)

    def _note_edits(self, state: EpisodeState, env: Env, frame: Frame) -> EpisodeState:
        """Record each step's event when its edit of the next request clears something new.

        The request worked out here is kept for `view` of the state returned: no step's edit
        reads the `VIEW_KEY` memo, the only difference between the two states.
        """
        before = dict(memo(state, VIEW_KEY, NOTHING_SHOWN).cleared)
        messages = state.context
        shown: list[tuple[str, ClearedKeys]] = []
        for step in self.steps:
            if step.edits:
                edit = step.edit(messages, state, env, frame)
                messages = edit.messages
                if _UNSEEN(edit.cleared, before.get(step.key, ())):
                    env.recorder.event(step.event)
                shown.append((step.key, edit.cleared))
        # kept whenever not the very tuples: the next call's `_UNSEEN` then reads the last ids
        # it was given as `before` and looks up only the ids added since
        if any(cleared is not before.get(key) for key, cleared in shown):
            state = with_memo(state, VIEW_KEY, Shown(cleared=tuple(shown)))
        env.keep_view(self, state, messages)
        return state

    def view(self, state: EpisodeState, env: Env, frame: Frame) -> tuple[Message, ...]:
        """The request: every step's request-only edit in order (`state.context` when none edits)."""
        kept = env.kept_view(self, state)
        if kept is not None:
            return kept
        messages = state.context
        for step in self.steps:
            if step.edits:
                messages = step.edit(messages, state, env, frame).messages
        return messages

    def prepare(self, state: EpisodeState, env: Env, frame: Frame) -> EpisodeState:
        """Nothing is injected."""
        return state

    def on_tool_result(self, state: EpisodeState, result: ToolResultBlock, env: Env) -> ToolResultBlock:
        """Every step's per-result step, in order."""
        for step in self.steps:
            result = step.on_tool_result(state, result, env)
        return result

    def builtins(self) -> Mapping[str, BuiltinTool]:
        """No built-in tools of its own."""
        return {}

    def ledger_text(self, state: EpisodeState) -> str:
        """The steps' ledgers as the model sees them ('' when none)."""
        return "\n".join(text for step in self.steps if (text := step.ledger_text(state)))

    def params(self) -> dict[str, Any]:
        """The preset's parameters, for results."""
        config = self.config
        if dataclasses.is_dataclass(config) and not isinstance(config, type):
            return dataclasses.asdict(config)
        return {}

    def describe(self) -> dict[str, Any]:
        """The strategy's name, source and parameters."""
        return {"name": self.name, "source": self.source, "params": self.params()}


def record_compaction(
    env: Env,
    *,
    before: int,
    after: int,
    threshold: float,
    compressed: int,
    kept: int,
    summary_ok: bool,
    summary: Summary,
    offload_path: str | None = None,
    floor: int = 0,
) -> None:
    """Add a `CompressionRecord` for a zoo step's compaction (before the next call)."""
    env.recorder.compressions.append(
        CompressionRecord(
            before_call=env.recorder.next_call_index,
            tokens_before=before,
            threshold=threshold,
            compressed_messages=compressed,
            reserved_messages=kept,
            zero_reserve_retry=False,
            overflow=False,
            summary_ok=summary_ok,
            fallback=not summary_ok,
            offload_path=offload_path,
            summary=summary,
            tokens_after=after,
            floor_tokens=floor,
        )
    )
