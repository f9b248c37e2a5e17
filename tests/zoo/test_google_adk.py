"""The Google ADK presets without ADK: their config checks, the session's ranges, what a run records.

Call-for-call parity with the installed package is `tests/parity/test_adk_parity.py`.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from ctxlab.core.messages.blocks import (
    Block,
    HintBlock,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
)
from ctxlab.core.messages.memo import RESUMED_BLOCKS
from ctxlab.core.messages.message import Message, text_message
from ctxlab.core.messages.model import CallKind
from ctxlab.core.wire.meter import ProtocolMeter
from ctxlab.core.wire.protocol import RULES, violations
from ctxlab.core.wire.views import to_openai
from ctxlab.core.world.script import Script, ScriptedCall, ScriptedRound, ScriptedTurn
from ctxlab.engine.session import run_script
from ctxlab.engine.trace import CONVENTIONS, CallRecord, Recorder
from ctxlab.models.scripted import ScriptModel
from ctxlab.models.summarizers import FixedSummarizer
from ctxlab.presets.google_adk import estimate, layout, session, wire
from ctxlab.presets.google_adk.arguments import parsed_arguments
from ctxlab.presets.google_adk.params import AdkParams, AdkTokenParams, EventsCompactionConfig
from ctxlab.presets.google_adk.preset import (
    CTXLAB_ADK_TEXTS,
    adk_estimate,
    as_message,
    build,
    build_tokens,
    context_events,
    invocations,
    reasoning_call,
    request_messages,
)
from ctxlab.presets.google_adk.wire import continuation, escaped_length, sent_request, sent_response
from ctxlab.texts import CTXLAB_TEXTS
from tests.parity.openhands_workloads import TOOLS
from tests.zoo_strategies import agent_histories


@pytest.mark.parametrize(
    ("given", "problem"),
    [
        ({}, "at least one compaction trigger"),
        ({"compaction_interval": 2}, "compaction_interval and overlap_size .* so set overlap_size too"),
        ({"overlap_size": 1}, "overlap_size is set, so set compaction_interval too"),
        ({"token_threshold": 10}, "token_threshold and event_retention_size .* so set event_retention_size"),
        ({"event_retention_size": 3}, "event_retention_size is set, so set token_threshold too"),
        ({"compaction_interval": 0, "overlap_size": 0}, "compaction_interval must be at least 1"),
        ({"token_threshold": 5, "event_retention_size": -1}, "event_retention_size must be at least 0"),
    ],
)
def test_the_config_is_checked_as_adk_checks_it(given: dict[str, int], problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        EventsCompactionConfig(**given)


def raw(count: int) -> tuple[session.RawEvent, ...]:
    return session.events_of(tuple(text_message("user", f"m{k}") for k in range(count)), list(range(count)))


def plain_events(context: list[Message]) -> list[tuple[int, int, str, tuple[Block, ...]]]:
    """The events read block by block over the whole context: (ordinal, invocation, role, blocks)."""
    out: list[tuple[int, int, str, tuple[Block, ...]]] = []
    for message, turn in zip(context, invocations(context), strict=True):
        if message.role == "user":
            out.append((len(out) + 1, turn, "user", message.blocks))
            continue
        for results, run in itertools.groupby(message.blocks, key=lambda b: isinstance(b, ToolResultBlock)):
            out.append((len(out) + 1, turn, "response" if results else "model", tuple(run)))
    return out


@given(agent_histories(), st.integers(0, 3))
def test_events_are_read_once_and_stay_as_the_context_grows(history: list[Message], cut: int) -> None:
    before = history[: max(1, len(history) - cut)]
    read = session.events_of(before, invocations(before))
    assert [(e.ts, e.invocation, e.role, e.blocks) for e in read] == plain_events(before)
    grown = session.events_of(history, invocations(history))
    assert [(e.ts, e.invocation, e.role, e.blocks) for e in grown] == plain_events(history)
    assert all(a is b for a, b in zip(read, grown, strict=False))  # the old events, unchanged
    assert [as_message(e, k) for k, e in enumerate(read)] == [as_message(e, k) for k, e in enumerate(grown)][
        : len(read)
    ]
    assert all(as_message(e, 0) is as_message(e, 0) for e in grown)
    fresh = [dataclasses.replace(e) for e in grown]  # equal events, counted afresh
    assert estimate.estimate_tokens(grown) == estimate.estimate_tokens(fresh)


@given(st.lists(st.tuples(st.sampled_from(["grow", "grow", "cut", "back"]), st.integers(0, 30)), max_size=20))
def test_the_token_estimate_of_a_growing_reply_is_its_blocks_counted_afresh(
    plan: list[tuple[str, int]],
) -> None:
    """A reply read at every call is summed by resuming an earlier version's sum: grown, cut, or
    an older version sent again, the estimate is the one its blocks give counted one by one."""
    user = text_message("user", "go")
    reply, versions = Message(role="assistant", blocks=()), []
    for action, n in plan:
        if action == "grow":
            more = [TextBlock(text="x" * k) for k in range(n % 5)]
            more += [ToolCallBlock(id=f"c{n}", name="Read", input='{"path": "a"}')] * (n % 2)
            more += [ToolResultBlock(id=f"c{n}", name="Read", output=(TextBlock(text='q"' * n),))] * (
                n % 3 == 0
            )
            reply = reply.appended(*more, *[TextBlock(text="y")] * 9)
        elif action == "cut":
            reply = reply.with_blocks(reply.blocks[: n % (len(reply.blocks) + 1)])
        elif action == "back" and versions:
            reply = versions[n % len(versions)]
        versions.append(reply)
        chars = sum(estimate._sent_block_chars(b) for m in (user, reply) for b in m.blocks)
        assert estimate.estimated_request_tokens([user, reply]) == chars // 4


_RANGES = st.tuples(st.integers(1, 40), st.integers(-3, 12))
"""A compaction's start and how far its end lies past it (below zero: an empty range)."""


@given(st.lists(st.tuples(_RANGES, st.booleans()), max_size=25))
@example([((1, 2), False), ((4, 2), False)])  # ranges that touch merge into one
@example([((5, 2), False), ((3, 6), True), ((2, -1), False)])  # contains the last; an empty one
def test_compactions_laid_on_the_last_layout_are_laid_out_as_afresh(
    appended: list[tuple[tuple[int, int], bool]],
) -> None:
    """Compactions appended one at a time, each laid out on the layout of those before it when
    it ends past them all (and afresh when not), give the layout and the latest compaction the
    whole tuple gives read afresh; a compaction only tried (the worth check's empty summary)
    first leaves the next one to find the layout it extends among the recent ones."""
    layout.layout_of.clear()
    compactions: tuple[session.Compacted, ...] = ()
    for (start, reach), tried_first in appended:
        new = session.Compacted(start=start, end=start + reach, text=f"s{len(compactions)}", after=0)
        if tried_first:
            weightless = dataclasses.replace(new, text="")
            tried = (*compactions, weightless)
            assert layout.layout_of(tried) == layout._lay_out(tried)
        compactions = (*compactions, new)
        assert layout.layout_of(compactions) == layout._lay_out(compactions)
        kept = layout.surviving(compactions)
        assert layout.latest(compactions) is compactions[kept[-1]]


def test_a_containing_range_supersedes_the_ranges_it_contains() -> None:
    events = raw(6)
    inner = session.Compacted(start=1, end=2, text="A", after=2)
    outer = session.Compacted(start=1, end=4, text="B", after=4)
    partial = session.Compacted(start=3, end=5, text="C", after=5)
    assert layout.surviving((inner, outer, partial)) == [1, 2]
    shown = session.effective(events, (inner, outer, partial))
    assert [getattr(x, "text", None) or x.ts for x in shown] == ["B", "C", 6]  # type: ignore[union-attr]


@given(st.text(alphabet=st.characters(codec=None, exclude_categories=())))
@example("del \x7f, é, 数据, 😀, lone \ud800")
def test_a_result_is_counted_as_json_dumps_escapes_it(text: str) -> None:
    """A result's JSON as ADK sends it counted as the default `json.dumps` writes it: every
    character past ASCII escaped (astral ones as pairs, lone surrogates too), and DEL."""
    assert escaped_length(sent_response(text)) == len(json.dumps({"result": text}))


@pytest.mark.parametrize("name", ["", "my agent", "1st", "{bogus}", "user"])
def test_an_agent_name_adk_refuses_is_refused(name: str) -> None:
    with pytest.raises(ValueError, match="ADK refuses it"):
        AdkParams(agent_name=name)


def test_a_call_limit_adk_refuses_is_refused() -> None:
    with pytest.raises(ValueError, match="ADK refuses"):
        AdkTokenParams(max_llm_calls=9_223_372_036_854_775_807)


@pytest.mark.parametrize("limit", [0, -1])
def test_max_llm_calls_of_0_or_less_is_no_limit_as_in_adk(limit: int) -> None:
    """ADK warns and enforces no limit; before, the lab stopped every reply before its first call."""
    params = AdkParams(events_compaction_config=EventsCompactionConfig(compaction_interval=2, overlap_size=0))
    ran = [
        run_script(
            script(3),
            build(dataclasses.replace(params, max_llm_calls=calls), CTXLAB_TEXTS),
            model=ScriptModel(script(3)),
            summarizer=FixedSummarizer(fields={}, text="notes"),
            texts=CTXLAB_TEXTS,
            context_size=100_000,
        )
        for calls in (limit, 500)
    ]
    assert [c.kind for c in ran[0].calls] == [c.kind for c in ran[1].calls] != []


def script(turns: int) -> Script:
    return Script(
        system_prompt="You are a test.",
        tools=TOOLS[:1],
        turns=tuple(
            ScriptedTurn(
                user=(TextBlock(text=f"Task {t}"),),
                rounds=(
                    ScriptedRound(
                        text=None,
                        calls=(
                            ScriptedCall(
                                tool="run",
                                input=json.dumps({"command": f"ls {t}"}),
                                result=(TextBlock(text=f"out {t} " * 200),),
                                id=f"c{t}",
                            ),
                        ),
                    ),
                ),
                final=f"done {t}",
            )
            for t in range(turns)
        ),
    )


def test_a_window_compaction_is_recorded_with_the_requests_it_shrank() -> None:
    params = AdkParams(events_compaction_config=EventsCompactionConfig(compaction_interval=2, overlap_size=0))
    outcome = run_script(
        script(5),
        build(params, CTXLAB_TEXTS),
        model=ScriptModel(script(5)),
        summarizer=FixedSummarizer(fields={}, text="notes"),
        texts=CTXLAB_TEXTS,
        context_size=100_000,
    )
    kinds = "".join("S" if c.kind == "summary" else "r" for c in outcome.calls)
    assert kinds == "rrrrSrrrrSrr"  # after turns 2 and 4, shown before the next turn's first call
    assert [c.before_call for c in outcome.compressions] == [5, 10]  # the reasoning call after each summary
    assert all(c.tokens_after < c.tokens_before for c in outcome.compressions)
    # No call loses its result; a request opened by the summary (a model turn) is Bedrock's refusal.
    found = {(c.call_index, v.rule, v.index, v.kind) for c in outcome.calls for v in c.violations}
    after = [c.call_index for c in outcome.calls if c.kind == "reasoning" and c.call_index >= 5]
    assert found == {(i, "bedrock", 1, "assistant_first") for i in after}


def test_a_summary_request_of_the_session_as_text_leaves_the_reasoning_requests_check_as_it_was(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """ADK's summary request is the session's events written as text, sharing no message with the
    reasoning requests around it: it is checked by a meter of its own, so the next reasoning
    request is checked in what it gained (each new message read once), not read again whole;
    and each request's violations are those a check from scratch finds."""
    read: list[int] = []
    track = ProtocolMeter._track
    monkeypatch.setattr(ProtocolMeter, "_track", lambda meter, m: (read.append(id(m)), track(meter, m))[1])
    params = AdkParams(events_compaction_config=EventsCompactionConfig(compaction_interval=2, overlap_size=1))
    turns = script(12)
    outcome = run_script(
        turns,
        build(params, CTXLAB_TEXTS),
        model=ScriptModel(turns),
        summarizer=FixedSummarizer(fields={}, text="notes"),
        texts=CTXLAB_TEXTS,
        context_size=100_000,
        record_requests=True,
    )
    assert sum(c.kind == "summary" for c in outcome.calls) >= 4
    assert len(read) == len(set(read))  # no stored message of any request is read twice
    for call in outcome.calls:
        assert list(call.violations) == violations(call.request["messages"], RULES)


def adk_chars(request: dict[str, Any]) -> int:
    """ADK's estimate of a recorded OpenAI request, read off the request itself: the characters of
    texts, call names and JSON arguments, and each response (sent as `{"result": ...}` written
    with non-ASCII as is) as `json.dumps` writes it by default, // 4; the adapter's continuation
    after a model turn is not among the contents ADK estimates."""
    names: dict[str, str] = {}
    total = 0
    for message in request["messages"]:
        if message["role"] == "system" or message["content"] == CTXLAB_ADK_TEXTS.continuation:
            continue
        for call in message.get("tool_calls") or ():
            names[call["id"]] = call["function"]["name"]
            args = json.loads(call["function"]["arguments"])
            total += len(call["function"]["name"]) + (len(json.dumps(args)) if args else 0)
        if message["role"] == "tool":
            name = names[message["tool_call_id"]]
            response = json.loads(message["content"])
            assert set(response) == {"result"}, response
            total += len(name) + len(json.dumps(response))
        elif isinstance(message.get("content"), str):
            total += len(message["content"])
    return total // 4


def test_the_token_preset_records_adks_estimate_of_each_request_and_the_window_preset_none() -> None:
    config = EventsCompactionConfig(token_threshold=600, event_retention_size=2)
    runs = {}
    for name, strategy in (
        ("tokens", build_tokens(AdkTokenParams(events_compaction_config=config), CTXLAB_TEXTS)),
        ("window", build(AdkParams(), CTXLAB_TEXTS)),
    ):
        runs[name] = run_script(
            script(5),
            strategy,
            model=ScriptModel(script(5)),
            summarizer=FixedSummarizer(fields={}, text="notes"),
            texts=CTXLAB_TEXTS,
            context_size=100_000,
            record_requests=True,
        ).calls
    reasoning = [c for c in runs["tokens"] if c.kind == "reasoning"]
    assert any(c.kind == "summary" for c in runs["tokens"])  # estimates before and after compactions
    assert [c.strategy_tokens for c in reasoning] == [adk_chars(c.request) for c in reasoning]
    assert all(c.strategy_tokens is None for c in runs["window"])


def plain_session(
    raw: Sequence[session.RawEvent], compactions: Sequence[session.Compacted]
) -> list[session.Item]:
    """The session's event list as ADK appends to it: raw events, each compaction before the first
    raw event at or past its `after` and after those appended before it."""
    out: list[session.Item] = []
    pending = list(compactions)
    for index, event in enumerate(raw):
        while pending and pending[0].after <= index:
            out.append(pending.pop(0))
        out.append(event)
    return out + pending


def plain_effective(
    raw: Sequence[session.RawEvent], compactions: Sequence[session.Compacted]
) -> list[session.Item]:
    """`_process_compaction_events` read event by event: every raw event tested against every
    surviving range, then all sorted by timestamp (a summary after the event at its end)."""
    kept = [compactions[i] for i in layout.surviving(compactions)]
    covered = [(c.start, c.end) for c in kept if c.start <= c.end]
    items: list[tuple[int, int, session.Item]] = [(c.end, 1, c) for c in kept]
    items += [(e.ts, 0, e) for e in raw if not any(a <= e.ts <= b for a, b in covered)]
    items.sort(key=lambda item: (item[0], item[1]))
    return [item for _, _, item in items]


def plain_usage(
    raw: Sequence[session.RawEvent], compactions: Sequence[session.Compacted], counts: Sequence[int]
) -> int | None:
    """`_latest_prompt_token_count` read off the whole session: the k-th model event carries the
    k-th count; walking back, the first event with a count before any compaction gives it."""
    models = [e for e in raw if e.role == "model"]
    usage = {e.ts: counts[k] for k, e in enumerate(models) if k < len(counts)}
    for item in reversed(plain_session(raw, compactions)):
        if isinstance(item, session.Compacted):
            break
        if item.ts in usage:
            return usage[item.ts]
    return None


@st.composite
def sessions(draw: st.DrawFn) -> tuple[tuple[session.RawEvent, ...], tuple[session.Compacted, ...]]:
    """A session's raw events (some left out, as a request's are) and compactions over any ranges,
    crossing or containing each other, some empty, appended at any count of events."""
    history = draw(agent_histories())
    read = session.events_of(history, invocations(history))
    mask = draw(st.lists(st.booleans(), min_size=len(read), max_size=len(read)))
    raw = tuple(e for e, kept in zip(read, mask, strict=True) if kept or draw(st.booleans()))
    stamp = st.integers(0, len(read) + 1)
    ranges = draw(st.lists(st.tuples(stamp, stamp, st.integers(0, len(raw) + 2)), max_size=6))
    compactions = tuple(
        session.Compacted(start=a, end=b, text=f"s{k}", after=after) for k, (a, b, after) in enumerate(ranges)
    )
    return raw, compactions


@given(sessions())
def test_a_request_carries_what_testing_every_event_against_every_range_keeps(
    drawn: tuple[tuple[session.RawEvent, ...], tuple[session.Compacted, ...]],
) -> None:
    raw, compactions = drawn
    for prefix in (raw, raw[: len(raw) // 2]):
        shown = session.effective(prefix, compactions)
        assert [id(item) for item in shown] == [id(item) for item in plain_effective(prefix, compactions)]


@pytest.mark.parametrize(
    ("ranges", "shown"),
    [
        # a range that ends before it starts hides nothing, and its summary follows the event at its end
        ([(1, 2), (4, 3), (5, 6)], ["s0", 3, "s1", 4, "s2"]),
        ([(1, 2), (4, 6)], ["s0", 3, "s1"]),  # one event between two ranges stays
        ([(2, 4), (1, 5)], ["s1", 6]),  # only the widest survives
    ],
)
def test_summaries_and_events_are_merged_by_timestamp(
    ranges: list[tuple[int, int]], shown: list[object]
) -> None:
    events = raw(6)
    compactions = tuple(
        session.Compacted(start=a, end=b, text=f"s{k}", after=6) for k, (a, b) in enumerate(ranges)
    )
    request = session.effective(events, compactions)
    assert [id(item) for item in request] == [id(item) for item in plain_effective(events, compactions)]
    assert [getattr(x, "text", None) or x.ts for x in request] == shown  # type: ignore[union-attr]


@given(st.lists(st.tuples(st.integers(0, 20), st.integers(0, 4)).map(lambda r: (r[0], r[0] + r[1]))))
def test_merged_ranges_hold_the_same_integers_apart_and_in_order(ranges: list[tuple[int, int]]) -> None:
    out = layout.merged(ranges)
    assert {k for a, b in out for k in range(a, b + 1)} == {k for a, b in ranges for k in range(a, b + 1)}
    assert all(a <= b for a, b in out)
    assert all(end + 1 < start for (_, end), (start, _) in itertools.pairwise(out))


@given(sessions(), st.data())
def test_the_usage_read_is_the_one_found_walking_back_the_whole_session(
    drawn: tuple[tuple[session.RawEvent, ...], tuple[session.Compacted, ...]], data: st.DataObject
) -> None:
    """Read as the session grows, is cut back and grows again (the model count resumes)."""
    raw, compactions = drawn
    models = sum(e.role == "model" for e in raw)
    for events in (raw[: len(raw) // 2], raw, raw[: len(raw) // 3], raw):
        answered = data.draw(st.integers(0, models + 2))
        counts = range(100, 100 + answered)
        found = session.counted_response(events, compactions, answered)
        assert (None if found is None else counts[found]) == plain_usage(events, compactions, counts)


def plain_estimate(messages: Sequence[Message]) -> int:
    """ADK's estimate read block by block: texts (a thought part's too), call names and JSON
    arguments, and each response's name and `{"result": ...}`, over every message but the
    system's, // 4."""
    total = 0
    for message in messages:
        if message.role == "system":
            continue
        for block in message.blocks:
            if isinstance(block, TextBlock):
                total += len(block.text)
            elif isinstance(block, ThinkingBlock):
                total += len(block.thinking)
            elif isinstance(block, ToolCallBlock):
                args = json.loads(block.input) if block.input.strip() else {}
                total += len(block.name) + (len(json.dumps(args)) if args and isinstance(args, dict) else 0)
            elif isinstance(block, ToolResultBlock):
                total += len(block.name) + len(json.dumps({"result": block.text}))
    return total // 4


@given(agent_histories(), st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2)), max_size=8))
def test_the_estimate_of_each_request_is_the_plain_reading_of_it(
    history: list[Message], plan: list[tuple[int, int]]
) -> None:
    """Requests that grow, lose their front to a summary, or come back, as the token preset's do."""
    system = text_message("system", "You are a test.")
    raw = session.events_of(history, invocations(history))
    summary = session.Compacted(start=1, end=max(1, len(raw) // 2), text="notes", after=len(raw))
    shown = [as_message(item, k) for k, item in enumerate(session.effective(raw, (summary,)))]
    requests: list[list[Message]] = [[system, *history], [system, *shown], list(history)]
    for pick, grow in plan:
        request = requests[pick % len(requests)]
        cut = len(request) - grow if pick == 3 else len(request)
        messages = tuple(request[:cut])
        chat = [m for m in messages if m.role != "system"]
        old_reading = estimate.estimate_tokens(session.events_of(chat, invocations(chat))) or 0
        sent = sent_request(messages, continuation("go on"))
        assert adk_estimate(sent, ()) == plain_estimate(messages) == old_reading
        if grow:
            request.append(history[grow % len(history)])


def record(index: int, kind: CallKind) -> CallRecord:
    """A journal entry of `kind` whose count is its index."""
    return CallRecord(
        call_index=index,
        kind=kind,
        turn=0,
        iteration=0,
        tokens=dict.fromkeys(CONVENTIONS, 1000 + index),
        output_tokens=0,
        context_messages=0,
        summary_chars=0,
    )


@given(st.lists(st.sampled_from(["reasoning", "summary"]), max_size=12))
def test_the_kth_reasoning_call_is_found_from_the_end_of_a_growing_journal(kinds: list[CallKind]) -> None:
    recorder = Recorder()
    journal = recorder.calls
    for index, kind in enumerate(kinds):
        recorder.record(record(index, kind))
        reasoning = [c for c in journal if c.kind == "reasoning"]
        assert recorder.reasoning_calls == len(reasoning)
        found = [reasoning_call(journal, k, len(reasoning)) for k in range(len(reasoning))]
        assert all(a is b for a, b in zip(found, reasoning, strict=True))
    with pytest.raises(IndexError):
        reasoning_call(journal, -1, recorder.reasoning_calls)


@given(agent_histories())
def test_a_contexts_events_are_read_once_for_it(history: list[Message]) -> None:
    context = tuple(history)
    events = context_events(context)
    assert events == session.events_of(context, invocations(context))
    assert context_events(context) is events
    assert context_events(tuple(history)) == events  # an equal context, read afresh
    for size in (*range(len(history) + 1), 1, len(history)):  # growing, then cut, then whole
        grown = tuple(history[:size])
        assert context_events(grown) == session.events_of(grown, invocations(grown))
    assert context_events(context[1:]) == session.events_of(context[1:], invocations(context[1:]))


@given(agent_histories(), st.integers(0, 6))
def test_a_requests_messages_are_the_items_read_one_by_one(history: list[Message], summary_at: int) -> None:
    events = list(context_events(tuple(history)))
    summary = session.Compacted(start=1, end=2, text="earlier", after=2)
    items: list[session.Item] = [*events[:summary_at], summary, *events[summary_at:]]
    for size in (*range(len(items) + 1), 2, len(items)):  # growing, then cut, then whole
        shown = items[:size]
        plain = tuple(as_message(item, k) for k, item in enumerate(shown))
        assert request_messages(shown) == plain
    assert request_messages(items[1:]) == tuple(as_message(item, k) for k, item in enumerate(items[1:]))


def test_a_request_is_written_as_adk_s_litellm_adapter_writes_it() -> None:
    """GA22: results as their function response's JSON, a model turn's texts joined with a
    newline (empty ones left out), and the continuation after a request that ends with a model
    turn; a user message's parts stay apart, and the stored messages are not edited."""
    user = Message(role="user", blocks=(TextBlock(text="<env>"), TextBlock(text="go")))
    call = ToolCallBlock(id="a", name="run", input='{"command": "ls"}')
    result = ToolResultBlock(id="a", name="run", output=(TextBlock(text='数据 "x"'),))
    texts = (TextBlock(text="look"), TextBlock(text=""), TextBlock(text="then run"))
    reply = Message(
        role="assistant", blocks=(*texts, call, result, TextBlock(text="done"), TextBlock(text="bye"))
    )
    sent = sent_request((user, reply), continuation("go on"))
    assert to_openai(sent) == [
        {"role": "user", "content": [{"type": "text", "text": "<env>"}, {"type": "text", "text": "go"}]},
        {
            "role": "assistant",
            "content": "look\nthen run",
            "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "run", "arguments": call.input}}
            ],
        },
        {"role": "tool", "tool_call_id": "a", "content": '{"result": "数据 \\"x\\""}'},
        {"role": "assistant", "content": "done\nbye"},
        {"role": "user", "content": "go on"},
    ]
    assert sent[0] is user and reply.blocks[4] is result
    assert sent_request((user, reply), continuation("go on")) == sent  # the same copies again
    assert sent_request((user,), continuation("go on")) == (user,)


def plain_sent(message: Message) -> Message:
    """A message as ADK's adapter sends it, read block by block: results as their responses, an
    assistant's texts between results joined at the first one's place (empty ones left out)."""
    out: list[Block] = []
    first: int | None = None
    for block in message.blocks:
        if isinstance(block, ToolResultBlock):
            media = tuple(p for p in block.output if not isinstance(p, TextBlock))
            response = TextBlock(text=sent_response(block.text))
            out.append(dataclasses.replace(block, output=(response, *media)))
            first = None
        elif isinstance(block, TextBlock) and message.role == "assistant" and first is not None:
            held = out[first]
            assert isinstance(held, TextBlock)
            out[first] = TextBlock(text="\n".join(t for t in (held.text, block.text) if t))
        else:
            first = len(out) if isinstance(block, TextBlock) and first is None else first
            out.append(block)
    return Message(role=message.role, blocks=tuple(out), id=message.id, name=message.name)


REPLY_BLOCKS: dict[str, Callable[[int], Block]] = {
    "text": lambda k: TextBlock(text=f"step {k}"),
    "empty": lambda k: TextBlock(text=""),
    "call": lambda k: ToolCallBlock(id=f"c{k}", name="run", input="{}"),
    "result": lambda k: ToolResultBlock(id=f"c{k}", name="run", output=(TextBlock(text=f"out {k}"),)),
    "hint": lambda k: HintBlock(hint=f"<hint {k}>"),
    "thinking": lambda k: ThinkingBlock(thinking=f"plan {k}"),
}
"""The `k`th block of a reply drawn from `reply_blocks`, by kind."""
reply_blocks = st.lists(st.sampled_from(list(REPLY_BLOCKS)), min_size=1, max_size=70)


@given(
    reply_blocks | reply_blocks.map(lambda kinds: kinds * 6),
    st.integers(0, 69),
    st.sampled_from(["assistant", "user"]),
)
@example(["text", "call", "result", "text", "empty", "text"] * 4, 9, "assistant")
def test_a_growing_reply_is_sent_as_its_blocks_read_afresh(kinds: list[str], cut: int, role: str) -> None:
    """A reply sent at every call as it grows, then cut back, resumes what was sent for the
    blocks it begins with: the same blocks and tally as reading it afresh."""
    reply = Message(role=role, blocks=(), id="r")  # type: ignore[arg-type]
    versions = []
    for k, kind in enumerate(kinds):
        reply = reply.appended(REPLY_BLOCKS[kind](k))
        versions.append(reply)
    versions.append(reply.with_blocks(reply.blocks[: min(cut, len(reply.blocks))]))
    for version in versions:
        sent = sent_request((version,), continuation("go on"))[0]
        expected = plain_sent(version)
        assert (sent, sent.tally) == (expected, expected.tally)
        if expected.blocks == version.blocks and not any(
            isinstance(b, ToolResultBlock) for b in version.blocks
        ):
            assert sent is version


@given(reply_blocks | reply_blocks.map(lambda kinds: kinds * 6))
@example(["call", "result", "text", "call", "call", "result", "result"] * 4)
def test_a_growing_reply_s_events_are_its_blocks_read_afresh(kinds: list[str]) -> None:
    """A reply read at every call as it grows resumes the events of the blocks it begins with:
    the events of reading it afresh, a long one's closed runs the very objects read before."""
    ask = text_message("user", "fix it")
    reply = Message(role="assistant", blocks=(), id="r")
    before: tuple[session.RawEvent, ...] = ()
    for k, kind in enumerate(kinds):
        reply = reply.appended(REPLY_BLOCKS[kind](k))
        context = [ask, reply]
        events = session.events_of(context, invocations(context))
        assert [(e.ts, e.invocation, e.role, e.blocks) for e in events] == plain_events(context)
        assert {e.message_id for e in events} == {ask.id, "r"} and events[0].user is ask
        if len(reply.blocks) > RESUMED_BLOCKS:  # a long reply's read resumes: all but the open run
            assert all(a is b for a, b in zip(before[:-1], events, strict=False))
        before = events


def test_a_call_whose_arguments_are_not_json_is_refused_with_the_reason() -> None:
    """ADK's adapter discards such a call, so a session holding one cannot be counted."""
    call = ToolCallBlock(id="c1", name="run", input="not json {")
    with pytest.raises(
        ValueError, match=r"call 'c1' \(run\): its arguments are not a JSON object.*never holds"
    ):
        session.arguments(call)
    for raw in ("[1]", "null", " ", '"text"'):  # read, but not an object: discarded too
        with pytest.raises(ValueError, match="MALFORMED_FUNCTION_CALL"):
            session.arguments(ToolCallBlock(id="c2", name="run", input=raw))


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=6,
)


@given(st.dictionaries(st.text(max_size=5), JSON_VALUES, max_size=4))
def test_arguments_adk_repairs_read_back_as_the_object(args: dict[str, object]) -> None:
    """GA19: an object written as JSON, as a Python literal or in a code fence reads back as the
    same object (ADK's `_parse_tool_call_arguments`), and is sent as `json.dumps` writes it."""
    for raw in (json.dumps(args), repr(args), f"```json\n{json.dumps(args)}\n```"):
        assert parsed_arguments(raw) == args
        assert wire.sent_arguments(raw) == json.dumps(args, ensure_ascii=False)


def test_both_adk_presets_fail_a_run_on_a_call_adk_discards() -> None:
    """Before, `google-adk-window` sent arguments ADK never sends while `google-adk-tokens`
    failed; a call ADK's adapter discards now fails either run, naming the call."""
    call = ToolCallBlock(id="b1", name="f", input="{not json")
    for answer in ((call,), (TextBlock(text="x"), call)):
        with pytest.raises(ValueError, match="call 'b1' \\(f\\)"):
            wire.adk_answer(answer)
