"""The summarizing presets through the engine: langchain-summary, deepagents (with large-result
eviction), the OpenHands condenser and the masking + summary hybrid."""

from __future__ import annotations

import json
import re
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.core.compaction.cutoff import ContextSize
from ctxlab.core.messages.blocks import Block, DataBlock, TextBlock, ToolCallBlock, ToolResultBlock
from ctxlab.core.messages.codec import decode_messages
from ctxlab.core.messages.message import Message
from ctxlab.core.messages.model import ModelError
from ctxlab.core.messages.units import view_units
from ctxlab.core.world.script import Script, ScriptedRound, ScriptedTurn
from ctxlab.models.summarizers import FailMode
from ctxlab.presets.deepagents import preset as deepagents
from ctxlab.presets.deepagents.summary import HISTORY_DIR
from ctxlab.presets.langchain import preset as langchain
from ctxlab.presets.langchain.exact import LangChainSummaryParams as ExactSummaryParams
from ctxlab.presets.openhands import preset as openhands
from ctxlab.presets.openhands.params import CondenserSettings, HybridParams, OpenHandsParams
from ctxlab.presets.openhands.view import sdk_arguments, sdk_request
from ctxlab.texts import CTXLAB_TEXTS
from ctxlab.texts.langchain import CTXLAB_LANGCHAIN_TEXTS
from tests.strategies import messages, paired_histories
from tests.zoo.runs import TOOLS, lines, one_turn, results_of, run, text, tool_call
from tests.zoo_strategies import agent_histories

PREFIX = "Summary of the conversation to date:\n\n"


def search(k: int, size: int = 4000) -> ScriptedRound:
    return ScriptedRound(calls=(tool_call("retrieve", f'{{"query": "q{k}"}}', text(size, tag=str(k % 10))),))


KEEP_20 = ContextSize("messages", 20)


def exact(trigger: float, keep: ContextSize = KEEP_20, **kw: object) -> ExactSummaryParams:
    return ExactSummaryParams(trigger=ContextSize("fraction", trigger), keep=keep, **kw)  # type: ignore[arg-type]


def test_langchain_summarizes_all_but_the_last_20_messages_into_a_user_message_in_the_context() -> None:
    ran = run(
        langchain.build_summary(exact(0.5), CTXLAB_TEXTS),
        one_turn(*(search(k, 400) for k in range(20))),
        window=4000,
    )
    (call,) = [c for c in ran.outcome.calls if c.kind == "summary"][:1]
    assert call.tokens["messages"] > 0 and "compressed" in ran.events()
    state = ran.outcome.state
    assert state.summary == ""  # the summary is a message in state, as LangChain keeps it
    first = state.context[0]
    assert first.role == "user" and first.blocks[0].text.startswith(PREFIX)  # type: ignore[union-attr]
    after = next(s for s in ran.sent() if s[1].blocks[0].text.startswith(PREFIX))  # type: ignore[union-attr]
    kept = view_units(after[2:])
    assert len(kept) <= 20 and kept[0].kind in ("calls", "user")  # the cut never starts on a result
    assert ran.violations() == []


def test_the_summary_message_is_summarized_again_with_the_next_span() -> None:
    ran = run(
        langchain.build_summary(exact(0.5, ContextSize("messages", 4)), CTXLAB_TEXTS),
        one_turn(*(search(k, 400) for k in range(30))),
        window=4000,
    )
    requests = ran.summarizer.requests
    assert len(requests) >= 2
    second = requests[1].messages[0].blocks[0].text  # type: ignore[union-attr]
    assert PREFIX.strip() in second and '<message type="human">' in second


def test_a_trim_that_leaves_nothing_gives_the_fixed_text_without_a_summary_call() -> None:
    """In one long tool loop the span's only human message is its first: when the span is over
    `trim_tokens_to_summarize`, trimming to start on a human message keeps nothing."""
    ran = run(
        langchain.build_summary(exact(0.5, ContextSize("messages", 4)), CTXLAB_TEXTS),
        one_turn(*(search(k, 8000) for k in range(12))),
        window=20_000,
    )
    assert ran.summarizer.requests == [] and "compressed" in ran.events()
    first = ran.outcome.state.context[0].blocks[0].text  # type: ignore[union-attr]
    assert first == PREFIX + CTXLAB_LANGCHAIN_TEXTS.too_long


def test_a_failed_summary_is_tried_three_times_and_then_fails_the_run() -> None:
    with pytest.raises(ModelError):
        run(
            langchain.build_summary(exact(0.5), CTXLAB_TEXTS),
            one_turn(*(search(k, 400) for k in range(20))),
            window=4000,
            fail_on=(1,),
            fail_mode="raise",
        )


@pytest.mark.parametrize("mode", ["empty", "no_tool_call", "malformed"])
def test_a_blank_summary_is_an_empty_summary_and_the_run_goes_on(mode: FailMode) -> None:
    """LangChain strips the answer's text (empty when it holds none) and keeps it as the summary."""
    ran = run(
        langchain.build_summary(exact(0.5), CTXLAB_TEXTS),
        one_turn(*(search(k, 400) for k in range(20))),
        window=4000,
        fail_on=(1,),
        fail_mode=mode,
    )
    first = ran.summarizer.requests[0].invocation
    assert first == 1 and [r.invocation for r in ran.summarizer.requests[:2]] == [1, 2]  # no retry
    texts = [b.text for r in ran.sent() for m in r for b in m.blocks if isinstance(b, TextBlock)]
    assert PREFIX in texts and "summary_failed" not in ran.events()


def test_without_a_trigger_langchain_never_summarizes() -> None:
    loop = one_turn(*(search(k, 4000) for k in range(20)))
    ran = run(langchain.SUMMARY_PRESET.strategy(), loop, window=4000)
    assert ran.summarizer.requests == [] and "compressed" not in ran.events()


def test_deepagents_evicts_a_large_result_to_a_file_with_a_head_and_tail_preview() -> None:
    big = ScriptedRound(
        calls=(tool_call("retrieve", '{"query": "all"}', lines(1200, width=79)),)
    )  # 96,000 chars
    small = ScriptedRound(calls=(tool_call("retrieve", '{"query": "one"}', lines(10, width=79)),))
    ran = run(deepagents.PRESET.strategy(), one_turn(big, small))
    stub, kept = results_of(ran)
    assert kept.text == lines(10, width=79)[0].text  # type: ignore[union-attr]
    (path,) = ran.workspace.files
    assert ran.workspace.read(path).decode("utf-8") == lines(1200, width=79)[0].text  # type: ignore[union-attr]
    assert f"saved at /large_tool_results/{stub.id}." in stub.text
    assert "... [1190 lines truncated] ..." in stub.text
    numbers = [m.group(1) for m in re.finditer(r"^ *(\d+)  ", stub.text, re.MULTILINE)]
    assert numbers == [*map(str, range(1, 6)), *map(str, range(1196, 1201))]
    assert ran.events() == ["offloaded"]


def test_deepagents_does_not_evict_excluded_tools_or_results_at_the_limit() -> None:
    at_limit = 4 * 20_000  # deepagents' 4 characters per token, its 20,000-token limit
    rounds = [
        ScriptedRound(calls=(tool_call("read_file", '{"path": "a"}', text(at_limit + 10)),)),
        ScriptedRound(calls=(tool_call("retrieve", "{}", text(at_limit)),)),
    ]
    ran = run(deepagents.PRESET.strategy(), one_turn(*rounds))
    assert [len(r.text) for r in results_of(ran)] == [at_limit + 10, at_limit] and not ran.workspace.files


def test_deepagents_summarizes_at_085_keeping_010_and_saves_the_history() -> None:
    ran = run(deepagents.PRESET.strategy(), one_turn(*(search(k) for k in range(12))), window=8000)
    (compression, *_) = ran.outcome.compressions
    assert compression.offload_path is not None and compression.tokens_before >= 0.85 * 8000
    saved = decode_messages(json.loads(ran.workspace.read(compression.offload_path)))
    assert saved and re.search(f"{HISTORY_DIR}/session_[0-9a-f]{{32}}\\.md", str(compression.summary))
    assert compression.tokens_after < 0.85 * 8000 and ran.violations() == []


def test_openhands_condenses_over_max_size_keeping_the_first_events_and_half_the_view() -> None:
    params = OpenHandsParams(condenser=CondenserSettings(max_size=10, keep_first=2))
    ran = run(openhands.build(params, CTXLAB_TEXTS), one_turn(*(search(k, 400) for k in range(12))))
    assert "compressed" in ran.events() and ran.violations() == []
    first = ran.summarizer.requests[0].messages[1].blocks[0].text  # type: ignore[union-attr]
    assert "ActionEvent (agent)" in first and "ObservationEvent (environment)" in first
    second = ran.summarizer.requests[1].messages[1].blocks[0].text  # type: ignore[union-attr]
    assert "CondensationSummaryEvent (environment)" in second  # the previous summary is an event
    context = ran.outcome.state.context
    assert context[0].role == "user" and context[1].id.startswith("openhands-summary")  # after keep_first


@given(
    empty=st.lists(st.booleans(), min_size=2, max_size=6),
    max_size=st.integers(4, 10),
    hybrid=st.booleans(),
)
def test_openhands_condenses_a_history_with_empty_user_messages(
    empty: list[bool], max_size: int, hybrid: bool
) -> None:
    """A transcript's user message may hold no part (content null or []): the SDK keeps it as a
    message event with no text. Before, the condenser's cut read the last block of every event
    and failed the run with an IndexError on such a message."""
    made = tuple(
        ScriptedTurn(user=() if blank else (TextBlock(text=f"Q{t}"),), rounds=(search(t, 40),), final="ok")
        for t, blank in enumerate(empty)
    )
    condenser = CondenserSettings(max_size=max_size, keep_first=0)
    strategy = (
        openhands.build_hybrid(HybridParams(condenser=condenser), CTXLAB_TEXTS)
        if hybrid
        else openhands.build(OpenHandsParams(condenser=condenser), CTXLAB_TEXTS)
    )
    ran = run(strategy, Script(system_prompt="", tools=TOOLS, turns=made))
    assert len(ran.outcome.calls) >= 2 * len(empty)  # every turn played: nothing failed


def test_openhands_previews_each_forgotten_event_in_500_characters() -> None:
    params = OpenHandsParams(condenser=CondenserSettings(max_size=6, keep_first=1))
    ran = run(openhands.build(params, CTXLAB_TEXTS), one_turn(*(search(k, 4000) for k in range(6))))
    request = ran.summarizer.requests[0].messages[1].blocks[0].text  # type: ignore[union-attr]
    assert "..." in request and len(request) < 4000


def test_the_hybrid_masks_during_accumulation_and_summarizes_when_the_view_is_long() -> None:
    params = HybridParams(condenser=CondenserSettings(max_size=30, keep_first=2))
    ran = run(openhands.build_hybrid(params, CTXLAB_TEXTS), one_turn(*(search(k) for k in range(24))))
    events = ran.events()
    assert "cleared" in events and "compressed" in events and ran.violations() == []
    last = [b for m in ran.sent()[-1] for b in m.blocks if isinstance(b, ToolResultBlock)]
    assert sum("elided" not in r.text for r in last) <= 10


def sdk_request_at_once(context: list[Message]) -> list[Message]:
    """The request as the SDK sends it to a model without vision, every message read afresh:
    images left out (a user message of images alone is sent as an empty text, a result of images
    alone keeps its tool message), consecutive user messages merged (those of images alone add
    nothing), every call of an assistant message re-serialised, its blank thoughts dropped."""
    out: list[Message] = []
    imageless: list[bool] = []  # per message of `out`: a user message of images alone
    for message in context:
        if message.role == "user":
            parts = tuple(b for b in message.blocks if not _image(b))
            empty = bool(message.blocks) and not parts
            if out and out[-1].role == "user":
                if not empty:
                    out[-1] = out[-1].with_blocks(parts if imageless[-1] else out[-1].blocks + parts)
                    imageless[-1] = False
                continue
            out.append(message.with_blocks((TextBlock(text=""),) if empty else parts))
            imageless.append(empty)
            continue
        imageless.append(False)
        if message.role == "assistant" and any(
            isinstance(b, ToolCallBlock | ToolResultBlock) for b in message.blocks
        ):
            blocks = message.blocks
            kept = [
                b
                for k, b in enumerate(blocks)
                if not (isinstance(b, TextBlock) and not b.text.strip() and _thought(blocks[k + 1 :]))
            ]
            sent = [_sent_block(b) for b in kept]
            out.append(message.with_blocks(tuple(sent)))
        else:
            out.append(message)
    return out


def _image(block: object) -> bool:
    return isinstance(block, DataBlock) and block.media_type.startswith("image/")


def _sent_block(block: Block) -> Block:
    if isinstance(block, ToolCallBlock):
        return ToolCallBlock(id=block.id, name=block.name, input=sdk_arguments(block.input))
    if isinstance(block, ToolResultBlock):
        return replace(block, output=tuple(p for p in block.output if not _image(p)))
    return block


def _thought(after: tuple[object, ...]) -> bool:
    """Whether a text followed by `after` is a thought: texts only, up to the next call."""
    for block in after:
        if isinstance(block, ToolCallBlock):
            return True
        if not isinstance(block, TextBlock):
            return False
    return False


def as_written(blocks: tuple[Block, ...], compact: bool) -> tuple[Block, ...]:
    """A reply's calls as a model may write them: compact JSON, or each after a blank thought."""
    written: list[Block] = []
    for block in blocks:
        if not isinstance(block, ToolCallBlock):
            written.append(block)
        elif compact:
            arguments = json.dumps(json.loads(block.input), separators=(",", ":"), ensure_ascii=False)
            written.append(ToolCallBlock(id=block.id, name=block.name, input=arguments))
        else:
            written += [TextBlock(text=" "), block]
    return tuple(written)


@st.composite
def sent_histories(draw: st.DrawFn) -> list[Message]:
    """Histories whose calls the SDK sends as they are, or some of them written otherwise."""
    history = draw(st.one_of(agent_histories(), paired_histories(), st.lists(messages, max_size=5)))
    return [
        m.with_blocks(as_written(m.blocks, draw(st.booleans())))
        if m.role == "assistant" and draw(st.booleans())
        else m
        for m in history
    ]


@given(sent_histories())
def test_openhands_request_is_read_afresh_and_a_reply_sent_again_is_the_same_copy(
    history: list[Message],
) -> None:
    once = sdk_request(history)
    assert list(once) == sdk_request_at_once(history)
    again = sdk_request(history)
    assert all(a is b for a, b in zip(once, again, strict=True) if a.role == "assistant")
