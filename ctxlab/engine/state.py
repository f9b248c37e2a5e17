"""The state of one episode, replaced as a whole at every step.

Invariants:
- `context_tally` is always the counter's size of `context`; every transition that changes the
  context keeps it right (appends add the new blocks' size; replacements recount the new context).
- Everything one reply produces goes into one assistant message whose id is `reply.reply_id`:
  appending creates that message when the last message is not it.
- A compression replaces `summary`, `context` and `reply` together, or nothing changes.
- `memos` hold a strategy's own values beside the context (an evidence ledger, a circuit
  breaker), by key; they are frozen values replaced with the state, so a compression that
  updates them is all or nothing too.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import NamedTuple, Protocol, TypeVar, cast

from ctxlab.core.agentscope.compress import ReplyMark
from ctxlab.core.agentscope.summary import Summary
from ctxlab.core.agentscope.tasks import Board
from ctxlab.core.growing import GrowingSet
from ctxlab.core.messages.blocks import ZERO, Block, Tally, tally_of
from ctxlab.core.messages.message import GROWN, LINEAGE_WORTH, Message
from ctxlab.core.messages.tokens import TokenCounter, measure_all
from ctxlab.engine.clock import IdGen, VirtualClock

AGENT_NAME = "agent"
NO_REPLY = ReplyMark(reply_id="", has_usage=False, name=AGENT_NAME)
NO_IDS = IdGen()
M = TypeVar("M")


NOTHING_READ = GrowingSet[str]()
"""The read cache of a run that has read no file (growing it never changes it)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class EpisodeState:
    """Summary, context, reply bookkeeping, task board, clock and ids of one run.

    `timezone` is the zone a turn of the workload moved to (None until one does); strategies that
    show the time use it over their configured zone. `memos` are the strategy's own values by
    key (see `memo` and `with_memo`).
    """

    summary: Summary = ""
    context: tuple[Message, ...] = ()
    context_tally: Tally = ZERO
    reply: ReplyMark = NO_REPLY
    cur_iter: int = 0
    turn: int = -1
    read_cache: GrowingSet[str] = NOTHING_READ
    tasks: Board = ()
    timezone: str | None = None
    clock: VirtualClock
    ids: IdGen = NO_IDS
    memos: tuple[tuple[str, object], ...] = ()


_FIELDS = tuple(f.name for f in fields(EpisodeState))


class Evolve(Protocol):
    """`evolve`'s signature: a state and the fields to change, by name."""

    def __call__(self, state: EpisodeState, /, **changes: object) -> EpisodeState: ...


def _written_out() -> Evolve:
    """`evolve`, written out for the fields of `EpisodeState` as `dataclasses` writes a class's
    `__init__`: a keyword per field, each field taken from the state unless given and written
    through its slot, a name that is no field refused; one call frame, no loop or dictionary of
    changes to walk."""
    keep = "_KEEP"
    lines = [
        f"def evolve(state, /, *, {', '.join(f'{name}={keep}' for name in _FIELDS)}, **unknown):",
        "    if unknown:",
        "        raise TypeError(f'EpisodeState has no field {next(iter(unknown))!r}')",
        "    new = _new(EpisodeState)",
        *(f"    _set_{name}(new, state.{name} if {name} is {keep} else {name})" for name in _FIELDS),
        "    return new",
    ]
    scope: dict[str, object] = {keep: object(), "_new": object.__new__, "EpisodeState": EpisodeState}
    scope.update({f"_set_{name}": vars(EpisodeState)[name].__set__ for name in _FIELDS})  # the slots' own
    exec("\n".join(lines), scope)  # source made above from the field names alone
    return cast(Evolve, scope["evolve"])


evolve = _written_out()
"""`dataclasses.replace(state, **changes)`, without its generic walk over field objects.

The engine replaces the state several times per model call, and the generic `replace` was a tenth
of a run's time. `EpisodeState` has no `__post_init__`, so copying the fields of the frozen value
is all its constructor does (a test holds the two equal)."""


def with_context(state: EpisodeState, context: tuple[Message, ...], counter: TokenCounter) -> EpisodeState:
    """The state holding `context` (recounted)."""
    return evolve(state, context=context, context_tally=measure_all(counter, context))


def append_message(
    state: EpisodeState, message: Message, counter: TokenCounter, **changes: object
) -> EpisodeState:
    """The state with `message` added at the end of the context (and `changes` made in the same step)."""
    tally = state.context_tally + counter.measure_message(message)
    context = _grown(state.context, message, state.context)
    return evolve(state, context=context, context_tally=tally, **changes)


def append_to_reply(
    state: EpisodeState, blocks: tuple[Block, ...], counter: TokenCounter, **changes: object
) -> EpisodeState:
    """The state with `blocks` added to the current reply message (created when missing), and
    `changes` made in the same step."""
    nbytes, ndata = state.context_tally
    for block in blocks:
        size = counter.measure(block)
        nbytes, ndata = nbytes + size.nbytes, ndata + size.ndata
    last = state.context[-1] if state.context else None
    if last is not None and last.role == "assistant" and last.id == state.reply.reply_id:
        context = _replaced_last(state.context, last.appended(*blocks))
    else:
        reply = Message(role="assistant", blocks=blocks, id=state.reply.reply_id, name=state.reply.name)
        context = _grown(state.context, reply, state.context)
    return evolve(state, context=context, context_tally=tally_of((nbytes, ndata)), **changes)


def _replaced_last(context: tuple[Message, ...], message: Message) -> tuple[Message, ...]:
    """`(*context[:-1], message)`. A long context whose every message but the last is a tuple
    noted before it (`GROWN`: the history the reply was appended to, and each version of the
    reply since) is that tuple and `message`, noted so too: one copy of the history, where
    slicing it off and joining made two."""
    settled = cast(tuple[Message, ...] | None, GROWN.head(context))
    if settled is not None and len(settled) == len(context) - 1:
        return _grown(settled, message, settled)
    return _grown(context[:-1], message, context)


def _grown(kept: tuple[Message, ...], message: Message, before: tuple[Message, ...]) -> tuple[Message, ...]:
    """`(*kept, message)`, `kept` being `before` or its leading part, noted (`GROWN`) as beginning
    with those messages of `before` when it is long enough to be found along its lineage
    (`LINEAGE_WORTH`)."""
    # a concatenation copies the history once; unpacking copies it twice, through a list, and
    # a history of thousands of messages is copied at every step
    context = kept + (message,)  # noqa: RUF005
    if len(context) >= LINEAGE_WORTH:
        GROWN.note(context, before, len(kept))
    return context


class Minted(NamedTuple):
    """A fresh id and the state that issued it."""

    id: str
    state: EpisodeState


def issue_id(state: EpisodeState, prefix: str) -> Minted:
    """A fresh id and the state that has issued it."""
    issued = state.ids.issue(prefix)
    return Minted(issued.id, evolve(state, ids=issued.ids))


def memo(state: EpisodeState, key: str, default: M) -> M:
    """The strategy value kept under `key`, or `default` when there is none of its type.

    >>> from ctxlab.engine.clock import VirtualClock
    >>> from ctxlab.core.world.script import DEFAULT_START
    >>> s = with_memo(EpisodeState(clock=VirtualClock(instant=DEFAULT_START)), "strikes", 2)
    >>> memo(s, "strikes", 0), memo(s, "other", 0)
    (2, 0)
    """
    for name, value in state.memos:
        if name == key and isinstance(value, type(default)):
            return value
    return default


def with_memo(state: EpisodeState, key: str, value: object) -> EpisodeState:
    """The state keeping `value` under `key` (replacing the previous one, keys in first-set order)."""
    if any(name == key for name, _ in state.memos):
        memos = tuple((name, value if name == key else old) for name, old in state.memos)
    else:
        memos = (*state.memos, (key, value))
    return evolve(state, memos=memos)
