"""Protocol-unit eviction from the oldest, and the bounded evidence ledger of what it evicted.

Source: nonoka `ProtocolAwareContextCompactor` (github.com/fyerfyer/Nonoka-agent,
`nonoka/core/memory.py` @ 73b4ea7: `_pop_protocol_unit` l.288, `_LEDGER_MAX_BYTES` l.66), the
deterministic compactor nonoka falls back to whenever its summarizer is absent or broken.

Invariants:
- Eviction removes whole protocol units (a call batch with all its results), oldest first, until
  the request is at or under the target. It never evicts a system unit, the latest user message,
  a unit of a protected message (by id, or the first user message when asked), or a call batch
  still missing results.
- The ledger is a value kept beside the context, rendered as one message. Each eviction appends
  one item per evicted result (tool, arguments, call id, artifact ref, exit code, a head+tail
  preview of its text) and per evicted user message, after the items of the previous ledger.
  As nonoka does, evicted assistant text and hints leave no item.
- The rendered ledger is at most `max_bytes` UTF-8 bytes: the oldest items go first. If the
  request with the ledger is over the target, the ledger is dropped entirely (and its items are
  gone, as in nonoka).
- The first check counts the previous ledger: a request already under the target is returned
  unchanged, ledger included.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ctxlab.core.messages.blocks import ZERO, Tally, TextBlock, ToolCallBlock, ToolResultBlock, utf8_len
from ctxlab.core.messages.drops import drop_units
from ctxlab.core.messages.message import Message, Role
from ctxlab.core.messages.sizes import (
    Sizer,
    unit_tallies,
)
from ctxlab.core.messages.units import ViewUnit, protocol_units, view_units
from ctxlab.core.settings import SettingError


@dataclass(frozen=True, slots=True, kw_only=True)
class EvictParams:
    """nonoka's compactor settings; header and marker wordings are ctxlab's own.

    Attributes:
        max_bytes: cap on the rendered ledger (nonoka: 12 KB); 0 or more (0: no ledger).
        preview_chars: results longer than this many characters are previewed (nonoka: 800);
            0 or more.
        preview_side: characters kept at each end of a previewed result (nonoka: 360); 1 or
            more, and below half of `preview_chars`.
        raw_arguments_chars: arguments that are not JSON are kept as `{"raw": ...}` up to this
            many characters (nonoka: 500); 0 or more.
        protect_first_user: also never evict the first user message (nonoka: only the latest).
        header: the ledger message's first line.
        marker: what stands between a preview's head and tail.
        role: the role of the rendered ledger message (nonoka: a system entry).
    """

    max_bytes: int = 12 * 1024
    preview_chars: int = 800
    preview_side: int = 360
    raw_arguments_chars: int = 500
    protect_first_user: bool = False
    header: str = "[Evidence ledger: tool calls evicted from the context]\n"
    marker: str = "\n[... middle omitted ...]\n"
    role: Role = "system"

    def __post_init__(self) -> None:
        side, chars = self.preview_side, self.preview_chars
        for name, unit, fix in (
            ("max_bytes", "bytes", "use 0 or more (0 keeps no ledger)"),
            ("preview_chars", "characters", f"use more than twice preview_side ({2 * side}; nonoka: 800)"),
            ("raw_arguments_chars", "characters", "use 0 or more"),
        ):
            value = getattr(self, name)
            if value < 0:
                raise SettingError((name,), f"{name}={value}: a count of {unit} is not negative; {fix}")
        if side < 1:
            raise SettingError(
                ("preview_side",),
                f"preview_side={side}: a preview keeps at least 1 character at each end (with 0, "
                "Python's text[-0:] would keep the whole result); use 1 or more (nonoka: 360)",
            )
        if 2 * side >= chars:
            raise SettingError(
                ("preview_side",),
                f"preview_side={side}: a preview keeps {2 * side} characters (both ends) of a result "
                f"longer than preview_chars={chars}, so it would be no shorter than the result; use a "
                "preview_side below preview_chars / 2, or raise preview_chars",
            )


@dataclass(frozen=True, slots=True, kw_only=True)
class ResultFacts:
    """What the lab knows about a result beyond its content: where it was saved, its exit code."""

    artifact_ref: str | None = None
    exit_code: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class LedgerCall:
    """One evicted result. `tool` and `arguments` (JSON text) are None when its call was not
    evicted with it."""

    call_id: str
    result: str
    tool: str | None = None
    arguments: str | None = None
    artifact_ref: str | None = None
    exit_code: int | None = None

    def as_json(self) -> dict[str, object]:
        """The item as the ledger renders it (nonoka's key order)."""
        item: dict[str, object] = {}
        if self.arguments is not None:
            item["tool"] = self.tool
            item["arguments"] = json.loads(self.arguments)
        item.update(
            tool_call_id=self.call_id or None,
            artifact_ref=self.artifact_ref,
            exit_code=self.exit_code,
            result=self.result,
        )
        return item


@dataclass(frozen=True, slots=True, kw_only=True)
class LedgerNote:
    """One evicted user message: its role and a preview of its text."""

    role: str
    content: str

    def as_json(self) -> dict[str, object]:
        """The item as the ledger renders it."""
        return {"role": self.role, "content": self.content}


LedgerItem = LedgerCall | LedgerNote


def item_json(item: LedgerItem) -> str:
    """The compact JSON text of one item.

    >>> item_json(LedgerNote(role="user", content="hi"))
    '{"role":"user","content":"hi"}'
    """
    return json.dumps(item.as_json(), ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True, slots=True, kw_only=True)
class Ledger:
    """The evidence ledger: evicted calls and user messages, oldest first."""

    items: tuple[LedgerItem, ...] = ()

    def text(self, params: EvictParams = EvictParams()) -> str:
        """The rendered text: the header, then the items as one compact JSON list."""
        return params.header + "[" + ",".join(item_json(i) for i in self.items) + "]"


def render_ledger(ledger: Ledger, params: EvictParams = EvictParams()) -> Message | None:
    """The message that carries the ledger, or None when it is empty."""
    if not ledger.items:
        return None
    return Message(role=params.role, blocks=(TextBlock(text=ledger.text(params)),))


def preview(text: str, params: EvictParams = EvictParams()) -> str:
    """`text`, or its head and tail around the marker when it is longer than `preview_chars`.

    >>> preview("x" * 801, EvictParams(preview_chars=800, preview_side=2, marker="|"))
    'xx|xx'
    """
    if len(text) <= params.preview_chars:
        return text
    return text[: params.preview_side] + params.marker + text[-params.preview_side :]


def capped(items: Sequence[LedgerItem], params: EvictParams = EvictParams()) -> tuple[LedgerItem, ...]:
    """The newest items whose rendered ledger fits `max_bytes` (oldest dropped first).

    Terminates: each step drops one more item (`start` rises by one, up to `len(items)`).
    """
    sizes = [utf8_len(item_json(item)) for item in items]
    total = utf8_len(params.header) + 2 + sum(sizes) + max(len(sizes) - 1, 0)
    start = 0
    while start < len(items) and total > params.max_bytes:
        total -= sizes[start] + (1 if len(items) - start > 1 else 0)
        start += 1
    return tuple(items[start:])


@dataclass(frozen=True, slots=True, kw_only=True)
class Eviction:
    """One eviction pass.

    Attributes:
        messages: the context after eviction.
        ledger: the ledger to keep beside it (empty when dropped or never needed).
        evicted: view indices (of the context before) that were evicted.
        tokens_before: request tokens before, the previous ledger included.
        tokens_after: request tokens after, the new ledger included.
        exceeded: the request is still over the target.
    """

    messages: tuple[Message, ...]
    ledger: Ledger
    evicted: tuple[int, ...]
    tokens_before: int
    tokens_after: int
    exceeded: bool


def evict(
    messages: Sequence[Message],
    *,
    target: int,
    sizer: Sizer,
    ledger: Ledger = Ledger(),
    facts: Mapping[str, ResultFacts] | None = None,
    protected: frozenset[str] = frozenset(),
    params: EvictParams = EvictParams(),
) -> Eviction:
    """Evict the oldest evictable protocol units until the request fits `target`.

    Args:
        messages: the stored context.
        target: the token budget of the whole request.
        sizer: counter, tools, and the overhead sent besides the context and the ledger
            (system prompt, summary).
        ledger: the ledger kept from earlier evictions.
        facts: artifact refs and exit codes by call id.
        protected: ids of stored messages never to evict.
        params: the compactor's settings.
    """
    units = view_units(messages)
    tally = sizer.size(messages)
    before = sizer.tokens(tally + _ledger_size(ledger, sizer, params))
    if before <= target:
        return Eviction(
            messages=tuple(messages),
            ledger=ledger,
            evicted=(),
            tokens_before=before,
            tokens_after=before,
            exceeded=False,
        )
    tallies = unit_tallies(messages, sizer.counter)
    blocked = blocked_units(messages, units, protected, params)
    evicted: list[int] = []
    for group in protocol_units(units):
        if sizer.tokens(tally) <= target:
            break
        if group.complete and not blocked.intersection(group.units):
            evicted.extend(group.units)
            tally = tally - sum((tallies[i] for i in group.units), ZERO)
    evicted.sort()
    items = ledger.items + ledger_items(messages, [units[i] for i in evicted], facts or {}, params)
    kept = drop_units(messages, units, evicted)
    new_ledger = Ledger(items=capped(items, params))
    after = sizer.tokens(sizer.size(kept) + _ledger_size(new_ledger, sizer, params))
    if new_ledger.items and after > target:
        new_ledger, after = Ledger(), sizer.count(kept)
    return Eviction(
        messages=kept,
        ledger=new_ledger,
        evicted=tuple(evicted),
        tokens_before=before,
        tokens_after=after,
        exceeded=after > target,
    )


def _ledger_size(ledger: Ledger, sizer: Sizer, params: EvictParams) -> Tally:
    message = render_ledger(ledger, params)
    return ZERO if message is None else sizer.size((message,))


def blocked_units(
    messages: Sequence[Message],
    units: Sequence[ViewUnit],
    protected: frozenset[str] = frozenset(),
    params: EvictParams = EvictParams(),
) -> set[int]:
    """View indices eviction must not touch: system units, the latest user message, units of
    protected messages, and the first user message when `protect_first_user`."""
    users = [u.index for u in units if u.kind == "user"]
    blocked = {u.index for u in units if u.kind == "system" or messages[u.message].id in protected}
    if users:
        blocked.add(users[-1])
        if params.protect_first_user:
            blocked.add(users[0])
    return blocked


def ledger_items(
    messages: Sequence[Message],
    evicted: Sequence[ViewUnit],
    facts: Mapping[str, ResultFacts],
    params: EvictParams = EvictParams(),
) -> tuple[LedgerItem, ...]:
    """Ledger items for evicted view units, in their order: one per result and user message."""
    calls: dict[str, ToolCallBlock] = {}
    items: list[LedgerItem] = []
    for unit in evicted:
        blocks = messages[unit.message].blocks
        if unit.kind == "calls":
            calls.update((b.id, b) for i in unit.blocks if isinstance(b := blocks[i], ToolCallBlock))
        elif unit.kind == "result":
            result = blocks[unit.blocks[0]]
            assert isinstance(result, ToolResultBlock)
            items.append(_call_item(result, calls.get(result.id), facts.get(result.id), params))
        elif unit.kind == "user":
            text = "".join(b.text for i in unit.blocks if isinstance(b := blocks[i], TextBlock))
            if text:
                items.append(LedgerNote(role="user", content=preview(text, params)))
    return tuple(items)


def _call_item(
    result: ToolResultBlock, call: ToolCallBlock | None, facts: ResultFacts | None, params: EvictParams
) -> LedgerCall:
    known = facts or ResultFacts()
    return LedgerCall(
        call_id=result.id,
        result=preview(result.text, params),
        tool=call.name if call else None,
        arguments=ledger_arguments(call.input, params) if call else None,
        artifact_ref=known.artifact_ref,
        exit_code=known.exit_code,
    )


def ledger_arguments(raw: str, params: EvictParams = EvictParams()) -> str:
    """A call's arguments as compact JSON text: the object, `{"raw": ...}` for text that is not
    JSON, `{}` for JSON that is not an object.

    >>> ledger_arguments('{"path": "a"}'), ledger_arguments("{oops"), ledger_arguments("[1]")
    ('{"path":"a"}', '{"raw":"{oops"}', '{}')
    """
    try:
        loaded = json.loads(raw)
    except json.JSONDecodeError:
        loaded = {"raw": raw[: params.raw_arguments_chars]}
    if not isinstance(loaded, dict):
        loaded = {}
    return json.dumps(loaded, ensure_ascii=False, separators=(",", ":"))
