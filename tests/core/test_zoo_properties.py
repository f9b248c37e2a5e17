"""Contracts every context-management family shares, checked on generated well-formed histories.

No family but the protocol-blind sliding window ever makes a request an `openai` or `anthropic`
provider would reject, and every family keeps the stored context's own shape rules.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.core.compaction.budget import PromptTrimParams, trim_prompt
from ctxlab.core.compaction.clearing import (
    AnthropicClearParams,
    clear_tool_uses,
)
from ctxlab.core.compaction.cutoff import ContextSize, SummaryParams, langchain_cut
from ctxlab.core.compaction.evict import evict
from ctxlab.core.compaction.large_results import LargeResultParams, apply_result_offload, plan_result_offloads
from ctxlab.core.compaction.microcompact import microcompact
from ctxlab.core.compaction.observations import (
    LastNObservationsParams,
    elide_observations,
)
from ctxlab.core.messages.blocks import ToolResultBlock
from ctxlab.core.messages.edits import replace_blocks
from ctxlab.core.messages.message import Message
from ctxlab.core.messages.sizes import (
    Sizer,
)
from ctxlab.core.messages.tokens import AgentScopeEstimator
from ctxlab.core.wire.protocol import Rule, violations
from ctxlab.core.wire.views import to_openai
from ctxlab.presets.langchain.exact import LangChainClearParams, clear_exact
from tests.oracles import broken_pairs
from tests.strategies import paired_histories
from tests.zoo_strategies import agent_histories

SIZER = Sizer(counter=AgentScopeEstimator())
Family = Callable[[list[Message], int], list[tuple[Message, ...]]]


def offload_all(msgs: list[Message], knob: int) -> list[tuple[Message, ...]]:
    params = LargeResultParams(token_limit=knob // 20, exclude_tools=())
    edits = {
        ref: apply_result_offload(_result(msgs, ref), plan, None, params)
        for ref, plan in plan_result_offloads(msgs, params)
    }
    return [replace_blocks(msgs, edits)]


def _result(msgs: list[Message], ref: object) -> ToolResultBlock:
    block = msgs[ref.message].blocks[ref.block]  # type: ignore[attr-defined]
    assert isinstance(block, ToolResultBlock)
    return block


def cuts(msgs: list[Message], knob: int) -> list[tuple[Message, ...]]:
    found = []
    lc = langchain_cut(
        msgs,
        sizer=SIZER,
        params=SummaryParams(trigger=(ContextSize("tokens", 0),), keep=ContextSize("tokens", knob)),
    )
    if lc is not None:
        found += [lc.head, lc.summarize, lc.keep]
    return found


FAMILIES: dict[str, Family] = {
    "microcompact": lambda m, k: [microcompact(m).messages],
    "evict": lambda m, k: [evict(m, target=k, sizer=SIZER).messages],
    "anthropic-clear": lambda m, k: [
        clear_tool_uses(
            m, sizer=SIZER, params=AnthropicClearParams(trigger=k, keep=k % 4, clear_tool_inputs=k % 2 == 0)
        ).messages
    ],
    "langchain-clear": lambda m, k: [
        clear_exact(
            m,
            LangChainClearParams(
                trigger=k, keep=k % 4, clear_at_least=k % 50 * (k % 2), clear_tool_inputs=k % 3 == 0
            ),
            "[cleared]",
        ).messages
    ],
    "swe-agent": lambda m, k: [
        elide_observations(m, LastNObservationsParams(n=k % 6 + 1, polling=k % 3 + 1)).messages
    ],
    "deepagents-offload": offload_all,
    "prompt-trim": lambda m, k: [
        trim_prompt(m, limit=k, sizer=SIZER, params=PromptTrimParams(keep_last=k % 4)).messages
    ],
    "summary-cuts": cuts,
}


@pytest.mark.parametrize("name", sorted(FAMILIES))
@given(histories=st.one_of(agent_histories(), paired_histories()), knob=st.integers(0, 3000))
def test_no_family_but_the_window_ever_breaks_the_protocol(
    name: str, histories: list[Message], knob: int
) -> None:
    rules: list[Rule] = ["openai", "anthropic"]
    empty_before = {v.rule for v in violations(to_openai(histories), rules) if v.kind == "empty_request"}
    for context in FAMILIES[name](histories, knob):
        found = violations(to_openai(context), rules)
        emptied = [v for v in found if v.kind == "empty_request" and v.rule not in empty_before]
        assert broken_pairs(to_openai(context)) == [], name
        # Families that drop messages to fit a budget may drop them all (the lab then reports the
        # request as refused); the others edit and never leave nothing to send. A summary cut
        # yields pieces of a request (a kept part may be empty), not requests.
        assert not emptied or name in {"evict", "prompt-trim", "summary-cuts"}, (name, emptied)


@pytest.mark.parametrize("name", sorted(set(FAMILIES) - {"summary-cuts", "evict", "prompt-trim"}))
@given(histories=agent_histories(), knob=st.integers(0, 3000))
def test_editing_families_keep_every_call_and_result_in_place(
    name: str, histories: list[Message], knob: int
) -> None:
    [context] = FAMILIES[name](histories, knob)
    assert [len(m.blocks) for m in context] == [len(m.blocks) for m in histories]
    for old, new in zip(histories, context, strict=True):
        assert [(type(a), getattr(a, "id", None)) for a in old.blocks] == [
            (type(b), getattr(b, "id", None)) for b in new.blocks
        ]
