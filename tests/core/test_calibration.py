"""Calibration shapes as pure arithmetic on hand-built contexts (published figures: JetBrains'
"The Complexity Trap", arXiv:2508.21433; anthropic.com/news/context-management).

The end-to-end calibration runs use the engine; these checks only fix the shape each family
must produce on the published workloads, so that a family that drifts shows here first:

- Observation masking (SWE-agent `last_n_observations`, M = 10) over 50 SWE-like turns whose
  observations are 84% of a turn's tokens cuts cumulative input tokens by about 54% (the
  Complexity Trap: 50.9–57.1% lower cost).
- Anthropic tool-result clearing (trigger 100k, keep 3) over a 100-turn search with 3,000-token
  results cuts cumulative input tokens by about 84% (Anthropic's 100-turn web-search eval).

Every size is a multiple of 4 bytes so the byte estimator's rounding is exact, and each expected
total is computed twice: from the family's output, and by hand from the formula.
"""

from __future__ import annotations

from ctxlab.core.compaction.clearing import AnthropicClearParams, clear_tool_uses
from ctxlab.core.compaction.observations import LastNObservationsParams, elide_observations
from ctxlab.core.messages.blocks import Block, TextBlock, ToolCallBlock
from ctxlab.core.messages.message import Message
from ctxlab.core.messages.sizes import (
    Sizer,
)
from ctxlab.core.messages.tokens import AgentScopeEstimator
from tests.zoo_strategies import reply, result, user

COUNTER = AgentScopeEstimator()
SIZER = Sizer(counter=COUNTER)
TASK = "t" * 40  # 10 tokens


def turns(count: int, action_bytes: int, observation: str, tool: str) -> list[Block]:
    blocks: list[Block] = []
    for k in range(count):
        arguments = '{"command": "' + f"{k:03d}".ljust(action_bytes - 15, "x") + '"}'
        assert len(arguments) == action_bytes
        blocks += [ToolCallBlock(id=f"c{k}", name=tool, input=arguments), result(f"c{k}", observation, tool)]
    return blocks


def requests(blocks: list[Block]) -> list[list[Message]]:
    """The context before each model call: the task, then every finished turn (call + result)."""
    return [
        [user(TASK), reply(*blocks[: 2 * k])] if k else [user(TASK)] for k in range(len(blocks) // 2 + 1)
    ][:-1]


def cumulative(contexts: list[list[Message]]) -> int:
    return sum(SIZER.count(c) for c in contexts)


def test_masking_the_last_10_of_50_swe_turns_saves_about_54_percent() -> None:
    observation = "\n".join("o" * 39 for _ in range(84))[:3360].ljust(3360, "o")  # 840 tokens, 84 lines
    blocks = turns(50, 640, observation, "bash")  # 160 + 840 tokens: observations are 84% of a turn
    raw = requests(blocks)
    masked = [list(elide_observations(c, LastNObservationsParams(n=10)).messages) for c in raw]
    notice = len("[earlier tool output elided: 84 lines]")
    expected_raw = sum((40 + (k - 1) * 4000 + 2) // 4 for k in range(1, 51))
    expected_masked = sum(
        (40 + (k - 1) * 640 + min(k - 1, 10) * 3360 + max(k - 11, 0) * notice + 2) // 4 for k in range(1, 51)
    )
    assert cumulative(raw) == expected_raw == 1_225_500
    assert cumulative(masked) == expected_masked
    saving = 1 - expected_masked / expected_raw
    assert 0.52 < saving < 0.55  # the published 50.9–57.1%; the ideal shape is 53.5%


def test_clearing_at_100k_keeping_3_saves_about_84_percent_on_a_100_turn_search() -> None:
    blocks = turns(100, 40, "r" * 12_000, "search")  # 10-token calls, 3,000-token results
    raw = requests(blocks)
    cleared = [list(clear_tool_uses(c, sizer=SIZER, params=AnthropicClearParams()).messages) for c in raw]
    placeholder = len(AnthropicClearParams().placeholder)

    def by_hand(k: int) -> int:
        full = 40 + (k - 1) * 12_040
        if (full + 2) // 4 <= 100_000:
            return (full + 2) // 4
        return (40 + (k - 1) * 40 + 3 * 12_000 + (k - 4) * placeholder + 2) // 4

    assert by_hand(34) == 99_340 and by_hand(35) == 9_637  # request 35 is the first one over 100k
    assert cumulative(cleared) == sum(by_hand(k) for k in range(1, 101))
    saving = 1 - cumulative(cleared) / cumulative(raw)
    assert 0.83 < saving < 0.86  # Anthropic: 84% fewer tokens on its 100-turn search eval


def test_persisted_clearing_saves_less_than_clearing_each_request() -> None:
    # Clearing the stored history (LangChain PR #39265 style) lets it grow back to the trigger
    # before clearing again; the API re-clears every request from the full history instead.
    blocks = turns(100, 40, "r" * 12_000, "search")
    stored: list[Message] = [user(TASK)]
    persisted = 0
    for k in range(100):
        persisted += SIZER.count(stored)
        grown = [
            *stored[:1],
            reply(*(stored[1].blocks if len(stored) > 1 else ()), *blocks[2 * k : 2 * k + 2]),
        ]
        stored = list(clear_tool_uses(grown, sizer=SIZER, params=AnthropicClearParams(persist=True)).messages)
    per_request = cumulative(
        [
            list(clear_tool_uses(c, sizer=SIZER, params=AnthropicClearParams()).messages)
            for c in requests(blocks)
        ]
    )
    raw = cumulative(requests(blocks))
    assert per_request < persisted < raw
    assert 0.50 < 1 - persisted / raw < 0.70


def test_the_text_block_helper_is_exact() -> None:
    assert COUNTER.count([user(TASK), reply(TextBlock(text="x" * 400))], ()) == 110
