"""The agent loop: replies and iterations in AgentScope's order, over a scripted workload.

Per turn: the clock moves, the user message is appended, a new reply starts (`cur_iter` 0).
Per iteration: a pending hint is appended (the forced last step's) → the strategy's
before-reasoning steps (image cap, compression, runtime-state injection, ...) → one reasoning
call → the response is saved into the reply message → its tool calls run, each result passing
the strategy's per-result step before it is saved → `cur_iter` advances once the round has no
unfinished call. A response without tool calls ends the reply; at `cur_iter == max_iters` the
next call is forced to answer without tools.

With tool groups or skills (`ctxlab.core.agentscope.toolkit`), the frame's tools are the ones
offered while the state's active groups are active: the frame is refreshed after every call, so a
request, a compression check and an injection count only what is offered; the system prompt
carries the skill listing; a call to a tool of an inactive group is answered with the
inactive-group error (never truncated, like the loop's other own errors) and never runs.

A call with a `delegate` script runs a sub-agent (`spawn` builds its loop: its own environment,
so its calls are recorded apart from the parent's): the sub-agent plays the script in a context of
its own, and only its final answer returns, as the delegating call's result, which then passes the
parent's per-result step like any tool result. The parent's requests never hold the sub-agent's
messages; `subagents` keeps each sub-agent's loop, in the order they ran, and a sub-agent's
`delegated_at` is the index of its parent's call whose answer delegated to it.

Invariants: compression runs only before a model call; a round's calls are stored before all of
its results (`[A, B, resA, resB]`); state is replaced as a whole at every step.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from ctxlab.core.agentscope.compress import ReplyMark, fixed_messages, unfinished_call_ids
from ctxlab.core.agentscope.toolkit import ACTIVE_GROUPS, inactive_refusal, offered_tools, with_skills
from ctxlab.core.agentscope.toolresult import merge_text_parts
from ctxlab.core.events import EventKind
from ctxlab.core.messages.blocks import (
    Block,
    HintBlock,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from ctxlab.core.messages.latest import REQUESTS
from ctxlab.core.messages.message import Message
from ctxlab.core.messages.model import ModelRequest, ModelResponse
from ctxlab.core.messages.tokens import measure_all, measure_edit
from ctxlab.core.messages.tools import ToolSchema
from ctxlab.core.world.retention import RetentionSnapshot
from ctxlab.core.world.script import Script, ScriptedCall, ScriptedTurn
from ctxlab.engine.clock import VirtualClock
from ctxlab.engine.env import Env
from ctxlab.engine.hooks import BuiltinTool, Frame, KeptAnswer, RunSettings, StandIn, Strategy
from ctxlab.engine.middleware import (
    HOOKS,
    Acted,
    ActingNext,
    CompressRequest,
    Middleware,
    Reasoned,
    ReasoningNext,
    ReplyNext,
    bucket,
    chain,
    transform_prompt,
)
from ctxlab.engine.state import AGENT_NAME, EpisodeState, append_message, append_to_reply, evolve, memo
from ctxlab.engine.trace import CallRecord, CompressionRecord
from ctxlab.engine.world import world_tools
from ctxlab.texts import fill


@dataclass(frozen=True, slots=True, kw_only=True)
class RunOutcome:
    """A finished run: every call and compression, the final state, the warnings, and the
    retention snapshots (after each compression and at the end; empty without probes)."""

    calls: tuple[CallRecord, ...]
    compressions: tuple[CompressionRecord, ...]
    state: EpisodeState
    warnings: tuple[str, ...] = ()
    retention: tuple[RetentionSnapshot, ...] = ()


@dataclass(slots=True)
class Loop:
    """One run of a script through a strategy (the loop's own mutable bookkeeping only)."""

    script: Script
    strategy: Strategy
    env: Env
    settings: RunSettings = field(default_factory=RunSettings)
    builtins: dict[str, BuiltinTool] = field(default_factory=dict)
    middlewares: tuple[Middleware, ...] = ()
    _scripted: dict[str, ScriptedCall] = field(init=False)
    frame: Frame = field(init=False)
    _reply: ReplyNext = field(init=False)
    _reasoning: ReasoningNext = field(init=False)
    _acting: ActingNext = field(init=False)
    spawn: Callable[[Script], Loop] | None = None
    subagents: list[Loop] = field(default_factory=list)
    delegated_at: int | None = None
    _basic_tools: tuple[ToolSchema, ...] = field(init=False)
    _active: tuple[str, ...] = field(init=False, default=())
    _kept: KeptAnswer | None = field(init=False, default=None)
    _finish: str | None = field(init=False, default=None)
    _keeps_empty: bool = field(init=False, default=False)
    _stand_in: StandIn | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        self._scripted = {c.id: c for c in self.script.calls() if c.id is not None}
        viewer = self.env.texts.skill_tool.name
        self.builtins = {**world_tools(self.script, viewer), **self.strategy.builtins(), **self.builtins}
        layers = {hook: bucket(self.middlewares, hook) for hook in HOOKS}
        base = with_skills(self.script.system_prompt, self.script.skills, self.env.texts)
        prompt = transform_prompt(layers["on_system_prompt"], base)
        self._basic_tools = self.strategy.tools(self.script.tools)
        self._kept = getattr(self.strategy, "kept_answer", None)
        self._finish = getattr(self.strategy, "finish_tool", None)
        self._keeps_empty = bool(getattr(self.strategy, "keeps_empty_answer", False))
        self._stand_in = getattr(self.strategy, "stand_in", None)
        self.frame = Frame(
            system_prompt=self.strategy.system_prompt(prompt),
            tools=self.offered(()),
            settings=self.settings,
        )
        self._reply = chain(layers["on_reply"], "on_reply", self.reply_impl)
        self._reasoning = chain(layers["on_reasoning"], "on_reasoning", self.reasoning_impl)
        self._acting = chain(layers["on_acting"], "on_acting", self.acting_impl)
        self.env.model_call = chain(layers["on_model_call"], "on_model_call", self.env.model.respond)
        self.env.compress = chain(layers["on_compress_context"], "on_compress_context", self.compress_impl)
        if self.env.strategy_counter is None:  # the strategy's own count, recorded beside the lab's
            self.env.strategy_counter = getattr(self.strategy, "request_counter", None)

    def release(self) -> None:
        """Untie this loop, and every sub-agent's, from its environment once the run's records
        have been read. The hooks refer back to the loop (its own steps, `env.compress`, `spawn`),
        so until then a finished run's objects are freed only by a full garbage collection, which
        a process that collects less runs rarely. The records stay readable; the loop cannot run
        again."""
        for child in self.subagents:
            child.release()
        self.env.unwire()
        self.spawn = None
        del self._reply, self._reasoning, self._acting

    def offered(self, active: tuple[str, ...]) -> tuple[ToolSchema, ...]:
        """The tools offered while the groups `active` are active (the strategy's tools when the
        script has no groups or skills)."""
        script = self.script
        if not (script.tool_groups or script.skills):
            return self._basic_tools
        return offered_tools(self._basic_tools, script.tool_groups, script.skills, active, self.env.texts)

    def sync_tools(self, state: EpisodeState) -> None:
        """Refresh the frame's tools when the state's active groups changed."""
        if not self.script.tool_groups:
            return
        active = memo(state, ACTIVE_GROUPS, ())
        if active != self._active:
            self._active = active
            self.frame = replace(self.frame, tools=self.offered(active))

    def run_clock(self) -> VirtualClock:
        """The clock at the start of the run."""
        return VirtualClock(instant=self.script.start, timezone=self.script.timezone)

    def run(self) -> RunOutcome:
        """Every turn of the script, in order."""
        state = EpisodeState(clock=self.run_clock())
        for index, turn in enumerate(self.script.turns):
            state = self._reply(self.start_turn(state, index, turn), turn)
        recorder = self.env.recorder
        return RunOutcome(
            calls=tuple(recorder.calls),
            compressions=tuple(recorder.compressions),
            state=state,
            warnings=tuple(recorder.warnings),
        )

    def start_turn(self, state: EpisodeState, index: int, turn: ScriptedTurn) -> EpisodeState:
        """Move the clock, append the user message, start a new reply (one new state)."""
        advance = turn.advance_seconds + _first_round_advance(turn)
        clock = state.clock.advanced(advance) if advance else state.clock
        timezone = state.timezone
        if turn.timezone:
            clock, timezone = clock.in_zone(turn.timezone), turn.timezone
        message = state.ids.issue("msg")
        reply = message.ids.issue("reply")
        user = Message(role="user", blocks=turn.user, id=message.id, name="user")
        return append_message(
            state,
            user,
            self.env.counter,
            clock=clock,
            timezone=timezone,
            turn=index,
            ids=reply.ids,
            reply=ReplyMark(reply_id=reply.id, has_usage=False, name=AGENT_NAME),
            cur_iter=0,
        )

    def reply_impl(self, state: EpisodeState, turn: ScriptedTurn) -> EpisodeState:
        """Iterate until a response has no tool calls (or the forced last step).

        A strategy with its own `iteration_limit` (a framework counting its condensations as
        steps) stops the reply after that many steps instead, without a forced answer; one with a
        `finish_tool` ends it once an answer whose last call is that tool's has run; one whose
        `stand_in` answers in the model's place ends it with that answer, no call made.
        """
        limit: int | None = getattr(self.strategy, "iteration_limit", None)
        steps = 0
        while True:
            if limit is not None and steps >= limit:
                self.env.recorder.event(EventKind.ITERATION_LIMIT)
                return state
            forced = limit is None and state.cur_iter == self.settings.max_iters
            if forced:
                hint = HintBlock(
                    hint=fill(self.settings.max_iters_hint, max_iters=self.settings.max_iters),
                    source=self.settings.max_iters_source,
                )
                state = append_to_reply(state, (hint,), self.env.counter)
            condensed = len(self.env.recorder.compressions)
            state = self.env.compress(state, CompressRequest())
            if limit is not None:
                steps += len(self.env.recorder.compressions) - condensed + 1
                if steps > limit:
                    self.env.recorder.event(EventKind.ITERATION_LIMIT)
                    return state
            state = self.strategy.prepare(state, self.env, self.frame)
            answer = self._stand_in(state) if self._stand_in is not None else ()
            if answer:
                return self._stood_in(state, answer)
            reasoned = self._reasoning(state, "none" if forced else "auto")
            state, response = reasoned.state, reasoned.response
            if not reasoned.saved and (kept := self.kept(response)):
                state = append_to_reply(state, kept, self.env.counter)
            if not response.calls or forced:
                return evolve(state, cur_iter=state.cur_iter + 1)
            state = self.act(state, response.calls)
            if response.calls[-1].name == self._finish:
                return evolve(state, cur_iter=state.cur_iter + 1)
            if not unfinished_call_ids(state.context, state.reply.reply_id):
                state = evolve(state, cur_iter=state.cur_iter + 1)
            advance = _round_advance(turn, state.cur_iter)
            if advance:
                state = evolve(state, clock=state.clock.advanced(advance))

    def compress_impl(self, state: EpisodeState, request: CompressRequest) -> EpisodeState:
        """The strategy's compression step."""
        return self.strategy.compress(state, self.env, self.frame, request)

    def _stood_in(self, state: EpisodeState, answer: tuple[Block, ...]) -> EpisodeState:
        """The reply ended by the strategy's answer in the model's place, warned of: the calls
        table shows no call for it."""
        said = " ".join(b.text for b in answer if isinstance(b, TextBlock))
        self.env.recorder.warnings.append(
            f"turn {state.turn}: {self.strategy.name} answered in the model's place before call "
            f"{self.env.recorder.next_call_index}, and the reply ended without a call: {said[:200]}"
        )
        return evolve(append_to_reply(state, answer, self.env.counter), cur_iter=state.cur_iter + 1)

    def reasoning_impl(self, state: EpisodeState, tool_choice: str) -> Reasoned:
        """One reasoning call and saving its response."""
        response = self.reason(state, tool_choice)
        return Reasoned(state=self.save_response(state, response), response=response)

    def request_messages(self, state: EpisodeState) -> tuple[Message, ...]:
        """System prompt, summary, context: what a reasoning request carries."""
        return (*fixed_messages(self.frame.system_prompt, state.summary), *state.context)

    def reason(self, state: EpisodeState, tool_choice: str) -> ModelResponse:
        """One reasoning call, with the strategy's request-only view of the context."""
        context = self.strategy.view(state, self.env, self.frame)
        fixed_part = fixed_messages(self.frame.system_prompt, state.summary)
        messages = REQUESTS(fixed_part, context)
        size = (
            state.context_tally
            if context is state.context
            else measure_edit(self.env.counter, context, state.context)
        )
        tokens = self.env.counter.total(measure_all(self.env.counter, fixed_part) + size, self.frame.tools)
        request = ModelRequest(
            kind="reasoning",
            messages=messages,
            tools=self.frame.tools,
            tool_choice=tool_choice,
            call_index=self.env.recorder.next_call_index,
            context_size=self.env.context_size,
            input_tokens=tokens,
            turn=state.turn,
            iteration=state.cur_iter,
        )
        return self.env.reasoning(state, request, tokens)

    def save_response(self, state: EpisodeState, response: ModelResponse) -> EpisodeState:
        """Append the response's blocks (as the strategy keeps them) to the reply message (an empty
        one created for no blocks where the strategy `keeps_empty_answer`); the reply now carries
        usage."""
        reply = state.reply
        if not reply.has_usage:
            reply = ReplyMark(reply_id=reply.reply_id, has_usage=True, name=reply.name)
        kept = self.kept(response)
        if kept or self._keeps_empty:
            return append_to_reply(state, kept, self.env.counter, reply=reply)
        return state if reply is state.reply else evolve(state, reply=reply)

    def kept(self, response: ModelResponse) -> tuple[Block, ...]:
        """The blocks of `response` stored in the context: the strategy's `kept_answer` of them, or
        the blocks as given. The calls run as the model gave them (their ids and names)."""
        return response.blocks if self._kept is None else self._kept(response.blocks)

    def act(self, state: EpisodeState, calls: tuple[ToolCallBlock, ...]) -> EpisodeState:
        """Run the calls in order and save each result after the strategy's per-result step."""
        for call in calls:
            acted = self._acting(state, call)
            saved = (
                self.strategy.on_tool_result(acted.state, acted.result, self.env)
                if acted.local
                else acted.result
            )
            state = append_to_reply(acted.state, (saved,), self.env.counter)
            self.sync_tools(state)
        return state

    def acting_impl(self, state: EpisodeState, call: ToolCallBlock) -> Acted:
        """Run one call: a built-in tool, or the world's scripted result (a tool of an inactive
        group does not run)."""
        refusal = inactive_refusal(
            self.script.tool_groups, call.name, memo(state, ACTIVE_GROUPS, ()), self.env.texts
        )
        if refusal is not None:
            result = ToolResultBlock(
                id=call.id, name=call.name, output=(TextBlock(text=refusal),), state="error"
            )
            return Acted(state=state, result=result, local=False)
        task = self._scripted.get(call.id)
        if task is not None and task.delegate is not None:
            return Acted(state=state, result=self.delegate(call, task.delegate))
        builtin = self.builtins.get(call.name)
        if builtin is not None and self._scripted_result(call) is None:
            outcome = builtin.run(state, call, self.env, self.frame)
            return Acted(state=outcome.state, result=outcome.result)
        scripted = self._scripted_result(call)
        if scripted is None:
            return Acted(
                state=state, result=unavailable_tool(call, self.env.texts.tool_not_found), local=False
            )
        result = self.scripted_result(call)
        read = read_path(call) if result.state == "success" else None
        if read is not None and read not in state.read_cache:  # in the cache until compressed away
            state = evolve(state, read_cache=state.read_cache.with_item(read))
        return Acted(state=state, result=result)

    def delegate(self, call: ToolCallBlock, script: Script) -> ToolResultBlock:
        """Run a sub-agent on `script`; its final answer is the call's result.

        Raises:
            ValueError: the run was assembled without a way to build sub-agents.
        """
        if self.spawn is None:
            raise ValueError(f"call {call.id} delegates to a sub-agent, but this run cannot start one")
        child = self.spawn(script)
        child.delegated_at = self.env.recorder.next_call_index - 1  # the call that delegated
        self.subagents.append(child)
        try:
            outcome = child.run()
        except Exception as error:  # the run fails as before; its error says which agent raised it
            error.add_note(f"in the sub-agent call {call.id} delegated to")
            raise
        return ToolResultBlock(id=call.id, name=call.name, output=(TextBlock(text=final_answer(outcome)),))

    def _scripted_result(self, call: ToolCallBlock) -> ScriptedCall | None:
        scripted = self._scripted.get(call.id)
        return scripted if scripted is not None and scripted.result is not None else None

    def scripted_result(self, call: ToolCallBlock) -> ToolResultBlock:
        """The scripted result of a call, its text chunks merged as a tool response merges them."""
        scripted = self._scripted_result(call)
        assert scripted is not None and scripted.result is not None
        return ToolResultBlock(
            id=call.id,
            name=call.name,
            output=merge_text_parts(scripted.result),
            state="error" if scripted.error else "success",
        )


def final_answer(outcome: RunOutcome) -> str:
    """The text of a run's last response: the text blocks that end its last reply message, after
    its last call, result or hint ('' when the context does not end with a reply)."""
    context = outcome.state.context
    if not context or context[-1].role != "assistant":
        return ""
    texts: list[str] = []
    for block in reversed(context[-1].blocks):
        if isinstance(block, ThinkingBlock):
            continue
        if not isinstance(block, TextBlock):
            break
        texts.append(block.text)
    return "".join(reversed(texts))


def all_subagents(loop: Loop) -> list[Loop]:
    """Every sub-agent a run started, its sub-agents' included, depth first in the order they ran."""
    return [child for _, child in labelled_subagents(loop)]


def labelled_subagents(loop: Loop, prefix: str = "sub-") -> list[tuple[str, Loop]]:
    """`all_subagents` with each one's label: `sub-1`, `sub-2`, ... in the order the run started
    them, a sub-agent's own ones `sub-1.1`, `sub-1.2`, ..."""
    found: list[tuple[str, Loop]] = []
    for number, child in enumerate(loop.subagents, start=1):
        label = f"{prefix}{number}"
        found += [(label, child), *labelled_subagents(child, f"{label}.")]
    return found


def read_path(call: ToolCallBlock, read_tool: str = "Read") -> str | None:
    """The `file_path` of a call named exactly `read_tool`, when its input names one."""
    if call.name != read_tool:
        return None
    try:
        arguments = json.loads(call.input)
    except json.JSONDecodeError:
        return None
    path = arguments.get("file_path") if isinstance(arguments, dict) else None
    return path if isinstance(path, str) else None


def unavailable_tool(call: ToolCallBlock, template: str) -> ToolResultBlock:
    """The error result the loop itself gives a call of a tool the world lacks (never truncated),
    worded by the run's `tool_not_found` text."""
    text = fill(template, tool=call.name)
    return ToolResultBlock(id=call.id, name=call.name, output=(TextBlock(text=text),), state="error")


def _first_round_advance(turn: ScriptedTurn) -> float:
    return turn.rounds[0].advance_seconds if turn.rounds else 0.0


def _round_advance(turn: ScriptedTurn, next_round: int) -> float:
    """Clock advance before the model call that produces round `next_round`."""
    return turn.rounds[next_round].advance_seconds if next_round < len(turn.rounds) else 0.0
