"""ctxlab's exact LangChain steps against the real `create_agent` (langchain 1.5.0) on generated
workloads: the same requests call for call (kinds, messages in the OpenAI view, tools sent),
summaries and clearing at the same calls, the same counts, and the same errors."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace

from hypothesis import event, given, settings
from hypothesis import strategies as st

from ctxlab.core.messages.blocks import DataBlock, TextBlock
from ctxlab.core.world.script import Script, ScriptedCall, ScriptedRound, ScriptedTurn, assign_call_ids
from tests.parity.lc_driver import LCConfig, LCTrace, run_langchain
from tests.parity.lc_lab import run_lab
from tests.parity.processes import outputs_under_two_hash_seeds
from tests.parity.workloads import CJK, PROSE, TOOLS, reasoning_loop
from tests.parity.workloads import retrieval_loop as loop


def compare(script: Script, config: LCConfig) -> tuple[LCTrace, LCTrace]:
    theirs, ours = run_langchain(script, config), run_lab(script, config)
    assert (ours.error is None) == (theirs.error is None)
    assert [c.kind for c in ours.calls] == [c.kind for c in theirs.calls]
    for index, (mine, real) in enumerate(zip(ours.calls, theirs.calls, strict=True)):
        assert mine.messages == real.messages, index
        assert mine.tools == real.tools, index
        assert mine.counted == real.counted, index
        assert mine.reasoning == real.reasoning, index
    if theirs.error is None:
        assert ours.final == theirs.final
    return ours, theirs


@st.composite
def text(draw: st.DrawFn, max_chars: int) -> str:
    size = draw(st.integers(max(1, max_chars // 3), max(1, max_chars)))
    base = CJK if draw(st.integers(0, 3)) == 0 else PROSE
    if draw(st.integers(0, 4)) == 0:
        base = base.replace(" ", "\n")  # lines for the partial trim
    return (base * (size // len(base) + 1))[:size]


def spaced(args: dict[str, object]) -> str:
    """`args` written with spaces and newlines around every token, and `1.50` for 1.5."""
    return (
        " "
        + json.dumps({**args, "k": 1.25}, indent=1, separators=(" ,", " : ")).replace("1.25", "1.50")
        + "\n"
    )


ARGUMENT_FORMS: tuple[Callable[[dict[str, object]], str], ...] = (
    lambda args: json.dumps(args, ensure_ascii=False),  # as LangChain writes them back
    lambda args: json.dumps(args, ensure_ascii=False, separators=(",", ":")),
    json.dumps,  # non-ASCII as \uXXXX escapes
    spaced,
    lambda args: '{"k": 1e3, ' + json.dumps(args, ensure_ascii=False)[1:],  # 1e3 is 1000.0
    lambda args: '{"query": "first", "k": [1, 2.0], ' + json.dumps(args)[1:],  # a key twice: the last
    lambda args: json.dumps(args, ensure_ascii=False).replace("\\n", "\n"),  # raw newlines in strings
)
"""How a model may write a call's arguments (all valid JSON objects): LangChain parses them and
every later request writes the object back with `json.dumps(args, ensure_ascii=False)`."""

EMPTY_FORMS = ("", "[]", "null", "0")
"""Arguments LangChain reads as no arguments at all (`{}`): blank, or a JSON value that is false."""


@st.composite
def written(draw: st.DrawFn, args: dict[str, object], empty: bool = True) -> str:
    """`args` as a model may write them; once in a while (when `empty`) no arguments at all."""
    if empty and draw(st.integers(0, 11)) == 0:
        return draw(st.sampled_from(EMPTY_FORMS))
    return draw(st.sampled_from(ARGUMENT_FORMS))(args)


@st.composite
def lc_rounds(draw: st.DrawFn, window: int) -> ScriptedRound:
    calls = []
    for n in range(draw(st.integers(1, 3))):  # parallel calls
        share = draw(st.sampled_from([0.002, 0.02, 0.08, 0.3, 1.2]))  # of the window, in characters x 4
        calls.append(
            ScriptedCall(
                tool=draw(st.sampled_from(["retrieve", "figure"])),
                input=draw(written({"query": draw(st.sampled_from([f"q{n}", f"{CJK[:4]}\n{n}"]))})),
                result=(TextBlock(text=draw(text(int(window * 4 * share)))),),
                error=draw(st.integers(0, 6)) == 0,
            )
        )
    thinking = draw(st.one_of(st.none(), text(300)))  # a reasoning model's `reasoning_content`
    return ScriptedRound(text=draw(st.one_of(st.none(), text(200))), thinking=thinking, calls=tuple(calls))


@st.composite
def scripts(draw: st.DrawFn, window: int) -> Script:
    turns = []
    for _ in range(draw(st.integers(1, 3))):
        long_loop = draw(st.integers(0, 5)) == 0
        count = draw(st.integers(20, 45)) if long_loop else draw(st.integers(0, 6))
        rounds = tuple(draw(lc_rounds(window)) for _ in range(count))
        user = TextBlock(text=draw(text(300)))
        turns.append(
            ScriptedTurn(user=(user,), rounds=rounds, final=draw(st.sampled_from(["", draw(text(100))])))
        )  # "": an empty answer
    return assign_call_ids(Script(system_prompt=draw(text(600)), tools=TOOLS, turns=tuple(turns)))


METRIC = st.sampled_from(["tokens", "messages", "fraction"])


@st.composite
def condition(draw: st.DrawFn, window: int) -> tuple[str, float]:
    kind = draw(METRIC)
    if kind == "fraction":
        return kind, draw(st.sampled_from([0.05, 0.2, 0.5, 0.85]))
    if kind == "messages":
        return kind, draw(st.integers(2, 40))
    return kind, draw(st.integers(max(1, window // 20), window))


@st.composite
def triggers(draw: st.DrawFn, window: int) -> object:
    form = draw(st.sampled_from(["one", "list", "clause", "mixed", "none"]))
    if form == "one":
        return draw(condition(window))
    if form == "list":
        return [draw(condition(window)) for _ in range(draw(st.integers(1, 3)))]
    if form == "clause":
        return dict(draw(st.lists(condition(window), min_size=1, max_size=3)))
    if form == "mixed":
        return [draw(condition(window)), dict(draw(st.lists(condition(window), min_size=1, max_size=2)))]
    return None


@st.composite
def summary_cases(draw: st.DrawFn) -> tuple[Script, LCConfig]:
    window = draw(st.sampled_from([1500, 4000, 16000, 64000]))
    keep_kind = draw(METRIC)
    keep = {
        "messages": ("messages", draw(st.integers(1, 25))),
        "tokens": ("tokens", draw(st.integers(10, window // 2))),
        "fraction": ("fraction", draw(st.sampled_from([0.05, 0.1, 0.3]))),
    }[keep_kind]
    config = LCConfig(
        middleware="summary",
        window=window,
        trigger=draw(triggers(window)),
        keep=keep,  # type: ignore[arg-type]
        trim_tokens_to_summarize=draw(st.sampled_from([4000, 4000, None, 50, 400, 1])),
        fail_on=frozenset(draw(st.lists(st.integers(1, 3), max_size=1))),
        anthropic=draw(st.integers(0, 3)) == 0,
    )
    return draw(scripts(window)), config


@st.composite
def clear_cases(draw: st.DrawFn) -> tuple[Script, LCConfig]:
    window = draw(st.sampled_from([1500, 4000, 16000, 64000]))
    clear = {
        "trigger": draw(st.sampled_from([100_000, window // 10, window // 2, window, 1])),
        "keep": draw(st.sampled_from([3, 0, 1, 5])),
        "clear_at_least": draw(st.sampled_from([0, 0, 10, 1000])),
        "clear_tool_inputs": draw(st.booleans()),
        "exclude_tools": draw(st.sampled_from([(), ("figure",)])),
    }
    return draw(scripts(window)), LCConfig(middleware="clear", window=window, clear=clear)


@settings(max_examples=50, deadline=None)
@given(summary_cases())
def test_langchain_summary_matches_summarization_middleware(case: tuple[Script, LCConfig]) -> None:
    _, theirs = compare(*case)
    summaries = [c for c in theirs.calls if c.kind == "summary"]
    event(f"summary calls: {min(len(summaries), 3)}{'+' if len(summaries) >= 3 else ''}")
    event("the run failed" if theirs.error else "the run finished")
    too_long = any("too long to summarize" in str(m.content) for c in theirs.calls for m in c.messages)
    event("a trim left nothing" if too_long else "no empty trim")


@settings(max_examples=50, deadline=None)
@given(clear_cases())
def test_langchain_clear_matches_clear_tool_uses_edit(case: tuple[Script, LCConfig]) -> None:
    _, theirs = compare(*case)
    cleared = any(m.content == "[cleared]" for c in theirs.calls for m in c.messages)
    event("results cleared" if cleared else "nothing cleared")


def summary_positions(trace: LCTrace) -> list[int]:
    """How many reasoning calls came before each summary call."""
    out, reasoning = [], 0
    for call in trace.calls:
        if call.kind == "reasoning":
            reasoning += 1
        else:
            out.append(reasoning)
    return out


def test_a_long_loop_of_small_results_summarizes_after_35_rounds_under_a_3000_token_trigger() -> None:
    ours, _ = compare(loop([200] * 60), LCConfig(trigger=("tokens", 3000), window=16_000))
    assert summary_positions(ours)[0] == 35  # LangChain counts ~77 tokens a round: 35 rounds reach 3000
    assert len([c for c in ours.calls if c.kind == "reasoning"]) == 61  # no 50-round cap


def test_a_trim_that_leaves_nothing_makes_no_summary_call() -> None:
    ours, theirs = compare(loop([4000] * 20), LCConfig(trigger=("tokens", 8000), keep=("messages", 4)))
    assert [c.kind for c in theirs.calls].count("summary") == 0
    summaries = [
        m for c in ours.calls for m in c.messages if m.kind == "human" and "summary" in str(m.content)
    ]
    assert summaries and all(
        str(m.content).endswith("Previous conversation was too long to summarize.") for m in summaries
    )


def test_a_large_result_in_the_kept_tail_is_summarized_again_and_again() -> None:
    sizes = [200] * 20
    sizes[2] = 12_000
    ours, _ = compare(loop(sizes), LCConfig(trigger=("tokens", 3000), keep=("messages", 20), window=16_000))
    assert len(summary_positions(ours)) > 2  # no breaker: the kept tail alone is over the trigger


def test_a_failing_summary_is_tried_three_times_and_ends_the_run() -> None:
    _, theirs = compare(loop([2000] * 10), LCConfig(trigger=("tokens", 2000), fail_on=frozenset({1})))
    assert theirs.error is not None and [c.kind for c in theirs.calls].count("summary") == 3


def test_a_blank_summary_is_stripped_and_kept_as_an_empty_summary() -> None:
    """L12: a blank answer is no failure; LangChain strips it and the run goes on with the
    summary message holding an empty summary (the answer is asked for once)."""
    for blank in ("", " \n\t "):
        ours, theirs = compare(loop([2000] * 10), LCConfig(trigger=("tokens", 2000), summary_text=blank))
        kinds = [c.kind for c in theirs.calls]
        assert theirs.error is None and ours.error is None and "summary" in kinds
        after = theirs.calls[kinds.index("summary") + 1]
        assert after.messages[1].kind == "human" and after.messages[1].content.endswith("\n\n")


DUMP = """
import dataclasses, json
from tests.parity.lc_driver import LCConfig, run_langchain
from tests.parity.test_langchain_parity import loop
sizes = [300, 5000, 200, 9000, 100] * 4
for config in (LCConfig(trigger=[("tokens", 1500), {"messages": 12}], keep=("tokens", 900)),
               LCConfig(middleware="clear", clear={"trigger": 1000, "keep": 1, "clear_tool_inputs": True})):
    print(json.dumps(dataclasses.asdict(run_langchain(loop(sizes, turns=2), config)), sort_keys=True))
"""


def test_the_driver_sends_the_same_bytes_in_two_processes() -> None:
    first, second = outputs_under_two_hash_seeds(DUMP)
    assert first and first == second


def test_an_empty_final_answer_is_an_ai_message_with_empty_content() -> None:
    """L25: LangChain keeps an empty final answer (no text, no call) as an AI message with empty
    content, sent and counted in every later request and counted for `keep` in messages."""
    script = loop([200, 300], turns=3)
    script = replace(script, turns=(replace(script.turns[0], final=""), *script.turns[1:]))
    played = ["human", "ai", "tool", "ai", "tool"]  # a prompt and two rounds
    ours, theirs = compare(script, LCConfig(trigger=("tokens", 100_000)))
    assert [m.kind for m in theirs.final] == [*played, "ai", *played, "ai", *played, "ai"]
    empty = theirs.final[5]
    assert empty.content == "" and not empty.tool_calls
    assert [m.kind for m in ours.calls[3].messages] == ["system", *played, "ai", "human"]  # sent, counted
    summarized, _ = compare(script, LCConfig(trigger=("messages", 12), keep=("messages", 6)))
    assert "summary" in [c.kind for c in summarized.calls]


def test_reasoning_is_kept_out_of_every_request_and_count() -> None:
    """A `reasoning_content` kept in the AI message's `additional_kwargs` (as LangChain's
    OpenAI-compatible integrations keep it) is sent in no request (langchain-core's OpenAI form
    carries no such field), counted by neither counter nor summarized; an answer of reasoning
    alone is an AI message with empty content, sent and counted. The lab's requests carry no
    thinking at all, so its own yardstick does not count it either."""
    script = reasoning_loop()
    for config in (
        LCConfig(trigger=("tokens", 100_000)),
        LCConfig(trigger=("messages", 9), keep=("messages", 4)),
        LCConfig(middleware="clear", clear={"trigger": 600, "keep": 1}),
    ):
        _, theirs = compare(script, config)
        assert all(not c.reasoning for c in theirs.calls)
        assert all("I should look up" not in json.dumps(c.messages, default=str) for c in theirs.calls)
    second_turn = compare(script, LCConfig(trigger=("tokens", 100_000)))[1].calls[4]
    assert [m.kind for m in second_turn.messages][-3:] == ["tool", "ai", "human"]
    assert second_turn.messages[-2].content == ""  # the answer of reasoning alone


def test_no_system_prompt_sends_no_system_message() -> None:
    """`create_agent(system_prompt=None)` sends no system message (`""` would send an empty one,
    which a workload without a system prompt does not ask for); the summary request is the
    middleware's own user message either way."""
    script = replace(loop([2000] * 12), system_prompt="")
    for config in (
        LCConfig(trigger=("tokens", 3000), keep=("messages", 4)),
        LCConfig(middleware="clear", clear={"trigger": 1000, "keep": 1}),
    ):
        ours, theirs = compare(script, config)
        assert all(c.messages[0].kind == "human" for c in (*ours.calls, *theirs.calls))
        assert config.middleware == "clear" or summary_positions(theirs)


def one_call_per_round(inputs: list[str]) -> Script:
    """One turn whose rounds each make one `retrieve` call written as given."""
    rounds = tuple(
        ScriptedRound(calls=(ScriptedCall(tool="retrieve", input=raw, result=(TextBlock(text=PROSE),)),))
        for raw in inputs
    )
    turn = ScriptedTurn(user=(TextBlock(text="Collect the passages."),), rounds=rounds, final="Done.")
    return assign_call_ids(Script(system_prompt="You research.", tools=TOOLS, turns=(turn,)))


def test_arguments_are_sent_as_langchain_parses_and_writes_them_back() -> None:
    """L28: LangChain keeps a call's arguments as the parsed object and every later request
    writes it back with `json.dumps(args, ensure_ascii=False)`; the lab sends and counts them
    so, in the summary request's transcript too, however the model wrote them."""
    args = {"query": f"{CJK[:3]}\n1"}
    script = one_call_per_round([form(args) for form in ARGUMENT_FORMS] + list(EMPTY_FORMS))
    for config in (
        LCConfig(trigger=("tokens", 100_000)),
        LCConfig(trigger=("messages", 8), keep=("messages", 3)),
        LCConfig(middleware="clear", clear={"trigger": 300, "keep": 1, "clear_tool_inputs": True}),
    ):
        compare(script, config)
    ours, _ = compare(script, LCConfig(trigger=("tokens", 100_000)))
    sent = [c.args for m in ours.calls[-1].messages for c in m.tool_calls]
    canonical = '{"query": "上下文\\n1"}'
    assert sent == [
        canonical,
        canonical,
        canonical,
        '{"query": "上下文\\n1", "k": 1.5}',
        '{"k": 1000.0, "query": "上下文\\n1"}',
        '{"query": "上下文\\n1", "k": [1, 2.0]}',
        canonical,
        *["{}"] * len(EMPTY_FORMS),
    ]


def test_deviation_arguments_langchain_holds_as_no_call_fail_the_lab_run() -> None:
    """L28: arguments that are JSON but not an object fail LangChain's chat model (its AI message
    holds object arguments only), and fail the lab's run there. Arguments that are not JSON (or
    blank) LangChain keeps as an invalid tool call, which its agent does not run (a turn of no
    other call ends there); the lab fails the run instead, naming the call."""
    for raw in ("[1, 2]", '"q"', "5"):
        ours, theirs = compare(one_call_per_round([raw]), LCConfig())
        assert theirs.error == "ValidationError" and ours.error == "ValueError"
    for raw in ("not json", " ", '{"query": "q"'):
        script = one_call_per_round([raw])
        theirs, ours = run_langchain(script, LCConfig()), run_lab(script, LCConfig())
        assert theirs.error is None and [m.kind for m in theirs.final] == ["human", "ai"]
        assert not theirs.final[-1].tool_calls and len(theirs.calls) == 1
        assert ours.error == "ValueError" and ours.calls == theirs.calls


def test_deviation_langchain_strips_a_tool_description_built_by_structured_tool() -> None:
    """L29: as in deepagents (D20), the driver builds the user's tools with
    `StructuredTool.from_function`, which strips the description; the lab sends a workload's
    description as written (LangChain's summarization counts no tools, so only the tools sent
    differ). Imported transcripts' descriptions may end in a newline (OpenHands' tools); pinned."""
    padded = replace(TOOLS[0], description=TOOLS[0].description + "\n")
    script = replace(loop([200]), tools=(padded, TOOLS[1]))
    theirs, ours = run_langchain(script, LCConfig()), run_lab(script, LCConfig())
    sent = {
        side: json.loads(trace.calls[0].tools[0])["function"]["description"]
        for side, trace in (("theirs", theirs), ("ours", ours))
    }
    assert sent == {"theirs": TOOLS[0].description, "ours": TOOLS[0].description + "\n"}
    assert [c.messages for c in ours.calls] == [c.messages for c in theirs.calls]


PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
IMAGES = (
    DataBlock(media_type="image/png", source=PNG, kind="base64"),
    DataBlock(media_type="image/jpeg", source="aGVsbG8=", kind="base64"),
    DataBlock(media_type="image/png", source="https://example.com/r.png"),
)


@settings(max_examples=15, deadline=None)
@given(summary_cases(), st.lists(st.lists(st.sampled_from(IMAGES), max_size=3), min_size=3, max_size=3))
def test_user_images_in_the_summarized_span_and_the_kept_part_match_summarization_middleware(
    case: tuple[Script, LCConfig], images: list[list[DataBlock]]
) -> None:
    """LangChain renders a URL image of the span as `<image url="..." />` and leaves a data URL
    out of the summary prompt (no media offload: that is deepagents'); kept images stay inline."""
    script, config = case
    turns = tuple(replace(t, user=(*t.user, *extra)) for t, extra in zip(script.turns, images, strict=False))
    _, theirs = compare(replace(script, turns=turns), config)
    prompts = [str(c.messages[0].content) for c in theirs.calls if c.kind == "summary"]
    assert not any(";base64," in p for p in prompts)
    event(f"a URL image in a summary: {any('<image url=' in p for p in prompts)}")


def test_a_url_image_of_the_span_is_named_and_a_data_image_left_out_of_the_summary_prompt() -> None:
    base = loop([300, 2000, 300], turns=3)
    users = [(TextBlock(text="Is this cloud over Paris?"), *IMAGES), (TextBlock(text="And this?"), IMAGES[0])]
    turns = (*(replace(t, user=u) for t, u in zip(base.turns, users, strict=False)), base.turns[2])
    config = LCConfig(trigger=("messages", 5), keep=("messages", 2), trim_tokens_to_summarize=None)
    _, theirs = compare(replace(base, turns=turns), config)
    prompts = [str(c.messages[0].content) for c in theirs.calls if c.kind == "summary"]
    assert (
        '<message type="human">Is this cloud over Paris? <image url="https://example.com/r.png" /></message>'
        in prompts[0]
    )
    kept = [str(m.content) for c in theirs.calls if c.kind == "reasoning" for m in c.messages]
    assert any(PNG in k for k in kept)
