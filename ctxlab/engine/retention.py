"""Retention tracking: where every planted probe is after each compression and at the end.

`RetentionTracker` is a middleware. It notes when the workload delivers each probe (in the
system prompt, a user turn, a model response or a tool result, before any truncation), and
after every compression step that changed the state it takes a `RetentionSnapshot`: each
delivered probe located in the visible context, the summary, the strategy's ledger and the
workspace's files (`ctxlab.core.world.retention`). The visible context is read from the next
reasoning request itself, so a strategy's request-only view and the hints injected after the
compression count as they are sent.

Strategies that keep an evidence ledger beside the context expose it by implementing
`LedgerKeeper.ledger_text`; the tracker searches that text as the ledger.

Invariants:
- The tracker only observes: every hook passes its inputs and outputs through unchanged.
- A snapshot's `before_call` is the index of the model call it precedes; the compression step
  runs before the reasoning call, after any summary calls it made.
- A compression no request follows (the run ended, or another compression came first) is
  snapshot from its state: the stored context mid-run; at the end, through `view` (the
  strategy's request-only view, which the session passes in).
- The final snapshot reads the last reasoning request sent, and counts as delivered only the
  probes that request could carry: retention is what the last request still shows. A run that
  sent none is snapshot from its final state, through `view`.
- Offloaded files never change once written (paths come from counters), so each is read and
  counted once per run.
- The re-read cost of a file is the counter's tokens of a tool result holding its text, which is
  what the built-in `Read` tool returns.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from ctxlab.core.agentscope.summary import summary_text
from ctxlab.core.messages.blocks import TextBlock, ToolCallBlock, ToolResultBlock, text_pieces
from ctxlab.core.messages.message import Message, text_message
from ctxlab.core.messages.model import ModelRequest, ModelResponse
from ctxlab.core.messages.tokens import TokenCounter
from ctxlab.core.world.reading import visible_text, without_summary
from ctxlab.core.world.retention import (
    OffloadText,
    Probe,
    RetentionSnapshot,
    Sources,
    probe_found,
    take_snapshot,
)
from ctxlab.core.world.script import ScriptedTurn
from ctxlab.engine.middleware import (
    Acted,
    ActingNext,
    CompressNext,
    CompressRequest,
    Middleware,
    ModelNext,
    Reasoned,
    ReasoningNext,
    ReplyNext,
)
from ctxlab.engine.state import EpisodeState
from ctxlab.engine.tools import READ_TOOL
from ctxlab.engine.trace import Recorder
from ctxlab.engine.workspace import Workspace


@runtime_checkable
class LedgerKeeper(Protocol):
    """A strategy that keeps a ledger (e.g. evicted tool calls) beside the context."""

    def ledger_text(self, state: EpisodeState) -> str:
        """The ledger as the model would see it ('' when empty)."""
        ...


def no_ledger(state: EpisodeState) -> str:
    """The ledger of a strategy that keeps none."""
    return ""


def stored_context(state: EpisodeState) -> tuple[Message, ...]:
    """The context as stored."""
    return state.context


def ledger_of(strategy: object) -> Callable[[EpisodeState], str]:
    """The strategy's ledger reader, or `no_ledger`."""
    return strategy.ledger_text if isinstance(strategy, LedgerKeeper) else no_ledger


def reread_tokens(counter: TokenCounter, text: str) -> int:
    """Tokens of a `Read` result holding `text`."""
    result = ToolResultBlock(id="", name=READ_TOOL, output=(TextBlock(text=text),))
    return counter.total(counter.measure(result), ())


@dataclass(eq=False)
class RetentionTracker(Middleware):
    """Records retention snapshots of `probes` during a run (see the module docstring).

    Call `start(system_prompt)` before the run and `finish(state, view)` after it, with the
    strategy's request-only view when it has one.
    """

    probes: tuple[Probe, ...]
    counter: TokenCounter
    recorder: Recorder
    workspace: Workspace | None = None
    ledger: Callable[[EpisodeState], str] = no_ledger
    system_prompt: str | None = None
    pending: EpisodeState | None = None
    last: tuple[Sequence[Message], int] | None = None
    """The last reasoning request's messages and its call index: what the final snapshot reads
    (kept as sent; its summary is left out only then, so a call costs no pass over them)."""
    snapshots: list[RetentionSnapshot] = field(default_factory=list)
    delivered: dict[str, int] = field(default_factory=dict)
    files: dict[str, OffloadText] = field(default_factory=dict)

    def start(self, system_prompt: str | None) -> None:
        """Note the system prompt as sent (None: none); probes in it are delivered now."""
        self.system_prompt = system_prompt
        self.deliver((system_prompt or "",))

    def deliver(self, texts: Iterable[str]) -> None:
        """Mark the probes found in `texts` as delivered before the next call."""
        waiting = [p for p in self.probes if p.key not in self.delivered]
        if not waiting:
            return
        text = "\n".join(texts)
        for probe in waiting:
            if probe_found(probe, text):
                self.delivered[probe.key] = self.recorder.next_call_index

    def on_reply(self, state: EpisodeState, turn: ScriptedTurn, next: ReplyNext) -> EpisodeState:
        """The user's message delivers its probes."""
        self.deliver(p.text for p in turn.user if isinstance(p, TextBlock))
        return next(state, turn)

    def on_reasoning(self, state: EpisodeState, tool_choice: str, next: ReasoningNext) -> Reasoned:
        """The model's response delivers the probes it writes."""
        reasoned = next(state, tool_choice)
        self.deliver(piece for block in reasoned.response.blocks for piece in text_pieces(block))
        return reasoned

    def on_acting(self, state: EpisodeState, call: ToolCallBlock, next: ActingNext) -> Acted:
        """A tool result delivers its probes, before any truncation."""
        acted = next(state, call)
        self.deliver((acted.result.text,))
        return acted

    def on_compress_context(
        self, state: EpisodeState, request: CompressRequest, next: CompressNext
    ) -> EpisodeState:
        """After a compression step that changed the state, a snapshot is due at the next request."""
        after = next(state, request)
        if after is not state:
            self.flush(stored_context)
            self.pending = after
        return after

    def on_model_call(self, request: ModelRequest, next: ModelNext) -> ModelResponse:
        """The due snapshot, of what this request shows; the request is kept as the last one."""
        if self.pending is not None:
            state, self.pending = self.pending, None
            self.snapshots.append(self.locate(without_summary(request.messages), state))
        self.last = (request.messages, request.call_index)
        return next(request)

    def flush(self, view: Callable[[EpisodeState], tuple[Message, ...]]) -> None:
        """Take a due snapshot from its state, the context read through `view`."""
        if self.pending is not None:
            state, self.pending = self.pending, None
            self.snapshots.append(self.snapshot(state, view=view))

    def snapshot(
        self,
        state: EpisodeState,
        *,
        view: Callable[[EpisodeState], tuple[Message, ...]] = stored_context,
        final: bool = False,
    ) -> RetentionSnapshot:
        """Where every delivered probe is in `state` (its context through `view`, by default the
        stored one) and the workspace."""
        system = () if self.system_prompt is None else (text_message("system", self.system_prompt),)
        shown = (*system, *view(state))
        return self.locate(shown, state, final=final)

    def locate(
        self,
        shown: Sequence[Message],
        state: EpisodeState,
        *,
        final: bool = False,
        carried_by: int | None = None,
    ) -> RetentionSnapshot:
        """Where every delivered probe is: `shown` is the visible context (system prompt included,
        summary excluded); the summary and the ledger come from `state`. With `carried_by`, only
        the probes delivered by that call count as delivered (the others came after it)."""
        delivered = frozenset(
            key for key, at in self.delivered.items() if carried_by is None or at <= carried_by
        )
        sources = Sources(
            context=visible_text(shown),
            summary=summary_text(state.summary),
            ledger=self.ledger(state),
            offloads=self.offloads(),
        )
        return take_snapshot(
            self.probes,
            delivered,
            sources,
            before_call=self.recorder.next_call_index,
            compressions=len(self.recorder.compressions),
            final=final,
        )

    def offloads(self) -> tuple[OffloadText, ...]:
        """Every file in the workspace as text, with its re-read cost."""
        if self.workspace is None:
            return ()
        for path in self.workspace.paths():
            if path not in self.files:
                text = self.workspace.read(path).decode("utf-8", errors="replace")
                self.files[path] = OffloadText(
                    path=path, text=text, reread_tokens=reread_tokens(self.counter, text)
                )
        return tuple(self.files.values())

    def finish(
        self, state: EpisodeState, view: Callable[[EpisodeState], tuple[Message, ...]] = stored_context
    ) -> tuple[RetentionSnapshot, ...]:
        """Every snapshot of the run, the final one last: of the last request sent, with the
        probes delivered by then (one delivered in the final answer reached no request), or,
        when no request was sent, of `state` (its context through `view`)."""
        self.flush(view)
        if self.last is None:
            self.snapshots.append(self.snapshot(state, view=view, final=True))
        else:
            sent, index = self.last
            self.snapshots.append(self.locate(without_summary(sent), state, final=True, carried_by=index))
        return tuple(self.snapshots)
