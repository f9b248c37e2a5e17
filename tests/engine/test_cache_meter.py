"""Prompt-cache accounting wired into every run (docs/architecture.md, Results) through `PromptCacheMeter`."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

import ctxlab.engine.cache as cache_module
from ctxlab.core.messages.message import Message, text_message
from ctxlab.core.messages.tokens import AgentScopeEstimator, TokenCounter
from ctxlab.core.wire.cache import CacheState, Prices, account, request_view
from ctxlab.core.world.script import Script, ScriptedRound
from ctxlab.engine.cache import PromptCacheMeter
from ctxlab.engine.env import Env
from ctxlab.models.scripted import ScriptModel
from ctxlab.models.summarizers import FixedSummarizer
from ctxlab.presets.agentscope import strategy as agentscope
from ctxlab.presets.anthropic.preset import PRESET as ANTHROPIC
from ctxlab.presets.none import preset as none
from ctxlab.texts import CTXLAB_TEXTS
from ctxlab.workloads.generators import generate
from tests.parity.lab import params_of
from tests.parity.spec import ParityConfig
from tests.parity.workloads import parity_cases
from tests.strategies import messages as any_messages
from tests.strategies import paired_histories
from tests.zoo.runs import FIELDS, one_turn, run, text, tool_call

COUNTER = AgentScopeEstimator()


def test_a_summary_request_offering_only_its_schema_tool_reads_nothing_of_the_conversation() -> None:
    """AgentScope's summary request sends the conversation with its structured-output tool alone:
    a provider's cached prefix starts with the tools, so none of the reasoning requests' prefix
    is read; the next summary request, with the same tool, reads the first one's."""
    rounds = (ScriptedRound(calls=(tool_call("retrieve", "{}", text(3000)),)) for _ in range(12))
    ran = run(agentscope.AgentScopeStrategy(texts=CTXLAB_TEXTS), one_turn(*rounds), window=6000)
    summaries = [c for c in ran.outcome.calls if c.kind == "summary"]
    assert len(summaries) >= 2 and summaries[0].cached_tokens == 0
    assert summaries[0].cache_write_tokens == summaries[0].tokens["as_sent"]
    reasoning = [c for c in ran.outcome.calls if c.kind == "reasoning"]
    assert all(c.cached_tokens > 0 for c in reasoning[1:])  # the same tools: the prefix is read


def test_every_run_is_metered_by_default() -> None:
    env = Env(
        counter=COUNTER,
        model=ScriptModel(Script(system_prompt="")),
        summarizer=FixedSummarizer(fields=FIELDS),
        texts=CTXLAB_TEXTS,
        context_size=1000,
    )
    assert isinstance(env.cache, PromptCacheMeter)


def test_an_appending_run_caches_each_previous_request_whole() -> None:
    script = one_turn(*(ScriptedRound(calls=(tool_call("retrieve", "{}", text(4000)),)) for _ in range(6)))
    ran = run(none.NoStrategy(), script)
    calls = ran.outcome.calls
    for previous, current in itertools.pairwise(calls):
        assert current.cached_tokens == previous.tokens["as_sent"]
        assert current.cache_write_tokens == current.tokens["as_sent"] - previous.tokens["as_sent"]
    assert calls[0].cached_tokens == 0
    totals = ran.meter.totals
    assert totals.calls == len(calls) and totals.cached_tokens == sum(c.cached_tokens for c in calls)
    assert totals.hit_rate == pytest.approx(totals.cached_tokens / totals.input_tokens)
    assert [u.output_tokens for u in ran.meter.usages] == [c.output_tokens for c in calls]
    assert totals.cost == pytest.approx(sum(u.cost for u in ran.meter.usages))


def pure_replay(
    env_calls: list[tuple[str, tuple[Message, ...], tuple[object, ...], int]],
) -> list[tuple[int, int]]:
    state = CacheState()
    figures = []
    for kind, messages, tools, output in env_calls:
        step = account(
            state,
            request_view(messages, COUNTER, tools),  # type: ignore[arg-type]
            kind=kind,  # type: ignore[arg-type]
            output_tokens=output,
            counter=COUNTER,
        )
        state = step.state
        figures.append((step.usage.cached_tokens, step.usage.written_tokens))
    return figures


class Spy(PromptCacheMeter):
    """A meter that remembers each request, to replay it through the pure function."""

    seen: list[tuple[str, tuple[Message, ...], tuple[object, ...], int]]

    def observe(self, kind, messages, tools, output_tokens=0):  # type: ignore[no-untyped-def]
        self.seen.append((kind, messages, tools, output_tokens))
        return super().observe(kind, messages, tools, output_tokens)


@given(parity_cases())
def test_the_meter_equals_the_pure_accounting_on_every_call(case: tuple[Script, ParityConfig]) -> None:
    script, config = case
    from ctxlab.engine.session import run_script
    from ctxlab.engine.workspace import InMemoryWorkspace

    spy = Spy(COUNTER)
    spy.seen = []
    outcome = run_script(
        script,
        agentscope.AgentScopeStrategy(texts=CTXLAB_TEXTS, params=params_of(config)),
        model=ScriptModel(script),
        summarizer=FixedSummarizer(fields=dict(config.summary_fields)),
        texts=CTXLAB_TEXTS,
        context_size=config.context_size,
        workspace=InMemoryWorkspace(),
        cache=spy,
    )
    assert [(c.cached_tokens, c.cache_write_tokens) for c in outcome.calls] == pure_replay(spy.seen)
    for call, usage in zip(outcome.calls, spy.usages, strict=True):
        assert usage.input_tokens == call.tokens["as_sent"]  # the meter counts what was recorded
        assert 0 <= call.cached_tokens <= call.tokens["as_sent"]


def test_each_stored_message_is_converted_once_while_it_is_remembered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    converted: list[int] = []
    real = cache_module.piece_of

    def counting(message: Message, counter: TokenCounter):  # type: ignore[no-untyped-def]
        converted.append(id(message))
        return real(message, counter)

    monkeypatch.setattr(cache_module, "piece_of", counting)
    script = generate("long_conversation", {"turns": 40}, seed=0).script
    ran = run(none.NoStrategy(), script)
    sent = ran.sent()
    expected = len(sent[0])
    for previous, current in itertools.pairwise(sent):
        known = {id(m) for m in previous}
        expected += sum(1 for m in current if id(m) not in known)
    assert len(converted) == expected  # new message objects only: O(change) per call
    assert len(converted) < sum(len(s) for s in sent) / 5


def test_clearing_breaks_the_prefix_where_the_edit_starts() -> None:
    rounds = [ScriptedRound(calls=(tool_call("retrieve", f'{{"q": {k}}}', text(12_000)),)) for k in range(12)]
    params = ANTHROPIC.params(trigger=20_000, keep=1)
    ran = run(ANTHROPIC.build(params, CTXLAB_TEXTS), one_turn(*rounds))
    edited = [c for c in ran.outcome.calls if c.tokens["as_sent"] < 20_000 and c.call_index > 5]
    assert edited and all(c.cached_tokens < c.tokens["as_sent"] - 3000 for c in edited)
    assert ran.meter.totals.hit_rate < run(none.NoStrategy(), one_turn(*rounds)).meter.totals.hit_rate


def test_thinking_no_request_carries_counts_nothing_in_a_calls_input() -> None:
    """A reply's thinking stays in the history and in the strategy's own count, and the provider
    receives none of it: the record's input is what the request carries, as a history without
    the thinking gives, and every request is cached whole but its new messages."""
    rounds = [
        ScriptedRound(thinking="t" * 4000, calls=(tool_call("retrieve", f'{{"q": {k}}}', text(400)),))
        for k in range(3)
    ]
    thought = run(none.NoStrategy(), one_turn(*rounds), record_requests=True).outcome.calls
    plain = [ScriptedRound(calls=r.calls) for r in rounds]
    unthought = run(none.NoStrategy(), one_turn(*plain), record_requests=True).outcome.calls
    assert [c.request for c in thought] == [c.request for c in unthought]
    assert [c.tokens["as_sent"] for c in thought] == [c.tokens["as_sent"] for c in unthought]
    assert [c.cached_tokens for c in thought] == [c.cached_tokens for c in unthought]
    assert thought[-1].tokens["messages"] > thought[-1].tokens["as_sent"] + 2900  # the engine's own


def test_a_meter_without_caching_bills_every_input_token() -> None:
    meter = PromptCacheMeter(COUNTER, prices=Prices(input=2.0), caching=False)
    message = Message(role="user", blocks=text(400))
    meter.observe("reasoning", (message,), ())
    use = meter.observe("reasoning", (message,), ())
    assert use == (0, 0, 100) and meter.totals.cost == pytest.approx(2 * 100 * 2.0 / 1e6)


@given(
    paired_histories(),
    st.lists(
        st.tuples(
            st.sampled_from(
                ["append", "drop", "slide", "skip", "cut", "copy", "swap", "summary", "grow", "grow"]
            ),
            any_messages,
            st.integers(1, 3),
        ),
        max_size=10,
    ),
)
def test_the_meter_equals_the_pure_accounting_when_a_window_moves(
    history: list[Message], edits: list[tuple[str, Message, int]]
) -> None:
    """Requests that grow, lose their front, keep their first message while the window moves
    (cutting the oldest kept message short, or copying it whole as a window cutting at the same
    place again does), lose messages just before their last, end with a reply that grew, or are
    summary requests in between."""
    meter, request, seen = PromptCacheMeter(COUNTER), list(history), []
    for op, message, size in edits:
        kind = "summary" if op == "summary" else "reasoning"
        if op == "append":
            request.append(message)
        elif op == "drop":
            del request[:size]
        elif op == "slide":
            del request[1 : 1 + size]
        elif op == "skip":
            del request[-1 - size : -1]
        elif op == "cut" and len(request) > 1:
            request[1] = request[1].with_blocks(request[1].blocks[1:] or message.blocks)
        elif op == "copy" and len(request) > 1:
            request[1] = request[1].with_blocks(request[1].blocks)
        elif op == "swap" and request:
            request[-1] = message
        elif op == "grow" and request:  # a reply gains rounds: a long one resumes its reads
            request[-1] = request[-1].appended(*message.blocks * 4 * size)
        sent = tuple(request) if kind == "reasoning" else (*request, message)
        seen.append((kind, sent, (), 0))
        meter.observe(kind, sent, ())
    assert [(u.cached_tokens, u.written_tokens) for u in meter.usages] == pure_replay(seen)


def test_windows_moving_on_keep_the_longer_part_where_it_is_and_count_as_the_pure_accounting() -> None:
    """A window that drops the front of the kept request (the run it goes on with is the longer
    part, kept in place and counted from a base) and one that drops messages just before its
    last (the front is the longer part), each after a new head, in turn."""
    history = [Message(role="user", blocks=text(40 + k)) for k in range(12)]
    head = Message(role="user", blocks=text(7))
    requests = [
        tuple(history),
        (history[0], head, *history[4:]),  # the front dropped, a new head: the run kept in place
        (history[0], head, *history[4:9], history[11]),  # dropped before the last: the front kept
        (history[0], *history[6:9], history[11]),
        tuple(history[7:]),
    ]
    meter = PromptCacheMeter(COUNTER)
    for request in requests:
        meter.observe("reasoning", request, ())
    expected = pure_replay([("reasoning", request, (), 0) for request in requests])
    assert [(u.cached_tokens, u.written_tokens) for u in meter.usages] == expected


def test_a_request_past_an_equal_copy_is_compared_by_its_very_messages(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A window that cuts inside its oldest message sends an equal copy of it at every call; the
    messages after the copy are the kept ones, so they are passed as one run, not one by one."""
    compared: list[int] = []
    real = cache_module.same_leading

    def counting(a, b):  # type: ignore[no-untyped-def]
        compared.append(1)
        return real(a, b)

    history = [text_message("system", "rules"), text_message("user", "a long question")]
    history += [text_message("assistant" if i % 2 else "user", f"message {i}") for i in range(200)]
    meter, seen = PromptCacheMeter(COUNTER), []
    monkeypatch.setattr(cache_module, "same_leading", counting)
    for turn in range(3):
        cut = history[1].with_blocks(history[1].blocks)  # equal to the last call's, not the same
        sent = (history[0], cut, *history[2:], text_message("user", f"next {turn}"))
        seen.append(("reasoning", sent, (), 0))
        compared.clear()
        meter.observe("reasoning", sent, ())
        assert len(compared) <= 4  # the copy, the run after it, the new message
    assert [(u.cached_tokens, u.written_tokens) for u in meter.usages] == pure_replay(seen)
    assert meter.usages[-1].cached_tokens > 0


def test_a_grown_reply_whose_last_view_took_in_hidden_blocks_is_sized_again() -> None:
    """A reply ending in thinking adds it to its last view message; once the reply goes on, the
    thinking belongs to the next one, so that view message's size is not carried over."""
    from ctxlab.core.messages.blocks import TextBlock, ThinkingBlock, ToolCallBlock, ToolResultBlock

    rounds = [
        block
        for i in range(8)
        for block in (
            ToolCallBlock(id=f"c{i}", name="look", input="{}"),
            ToolResultBlock(id=f"c{i}", name="look", output=(TextBlock(text=f"result {i}"),)),
        )
    ]
    reply = Message(role="assistant", blocks=(*rounds, ThinkingBlock(thinking="thinking it over")), id="r")
    user = Message(role="user", blocks=(TextBlock(text="go"),))
    requests = [(user, reply), (user, reply.appended(TextBlock(text="done")))]
    meter, seen = PromptCacheMeter(COUNTER), []
    for sent in requests:
        seen.append(("reasoning", sent, (), 0))
        meter.observe("reasoning", sent, ())
    assert [(u.cached_tokens, u.written_tokens) for u in meter.usages] == pure_replay(seen)


def test_the_pieces_of_a_reply_that_grows_at_every_call_do_not_pile_up() -> None:
    """Each version of a growing reply is a new message with a piece as long as the reply; the
    meter drops those no kept request holds within a few calls of leaving them, and counts each
    request's input as a meter that kept none does."""
    from ctxlab.core.messages.blocks import ToolCallBlock, ToolResultBlock

    meter = PromptCacheMeter(COUNTER)
    system, user = text_message("system", "s"), text_message("user", "go")
    reply = Message(role="assistant", blocks=(), id="r")
    for i in range(300):
        call = ToolCallBlock(id=f"c{i}", name="read", input="{}")
        reply = reply.appended(call, ToolResultBlock(id=f"c{i}", name="read", output=(), state="success"))
        request = (system, user, reply)
        use = meter.observe("reasoning", request, ())
        assert use.input == PromptCacheMeter(COUNTER).observe("reasoning", request, ()).input
        # three kept messages: a look drops the dead pieces past twice as many and a few
        assert len(meter._pieces) <= 16
