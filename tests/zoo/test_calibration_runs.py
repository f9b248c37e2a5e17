"""Calibration through the engine against published shapes: JetBrains' "The Complexity Trap"
(arXiv:2508.21433), Anthropic's context-management announcement (anthropic.com/news/
context-management) and Manus's blog on the KV-cache hit rate (2025-07-18).

Every size is a multiple of 4 bytes where it matters, so the estimator's rounding
(`(bytes + 2) // 4` on the whole request) is exact and each total can be written by hand:

(a) The Complexity Trap: 50 SWE-agent turns whose observations are 84% of a turn's tokens;
    masking all but the last 10 observations cuts total input tokens by 50–58% (the paper:
    50.9–57.1% lower cost with a 10-turn window; the arithmetic gives ≈ 53%).
(b) Anthropic's 100-turn search (3,000-token results, short turns) under clear-tool-uses with
    trigger 100k and keep 3: clearing the stored history (the context saws between ~15k and
    100k instead of growing past 300k) cuts total input tokens by 60–72% (≈ 67%); clearing each
    request from the full history, as the API does, cuts ≈ 83% (Anthropic reports 84%).
(c) Clearing lowers the prompt-cache hit rate against appending only, and `clear_at_least`
    recovers part of it by clearing less often, in bigger batches.
"""

from __future__ import annotations

from ctxlab.core.compaction.clearing import AnthropicClearParams
from ctxlab.core.compaction.observations import LastNObservationsParams
from ctxlab.core.messages.blocks import TextBlock
from ctxlab.core.messages.tools import tools_bytes
from ctxlab.core.world.script import Script, ScriptedCall, ScriptedRound, ScriptedTurn
from ctxlab.presets.anthropic import preset as anthropic
from ctxlab.presets.none import preset as none
from ctxlab.presets.swe_agent import preset as swe_agent
from ctxlab.texts import CTXLAB_TEXTS
from ctxlab.workloads.build import schemas
from tests.zoo.runs import run

OBSERVATION = "\n".join("o" * 39 for _ in range(84))  # 84 lines, 3,359 bytes
OBSERVATION += "o"  # 3,360 bytes: 840 tokens
NOTICE = "[earlier tool output elided: 84 lines]"  # what an elided observation becomes: 38 bytes


def action(k: int) -> str:
    """A 640-byte call input (160 tokens)."""
    text = '{"command": "' + f"{k:03d}".ljust(640 - 15, "x") + '"}'
    assert len(text) == 640
    return text


def swe_script() -> Script:
    rounds = tuple(
        ScriptedRound(
            calls=(ScriptedCall(tool="bash", input=action(k), result=(TextBlock(text=OBSERVATION),)),)
        )
        for k in range(50)
    )
    turn = ScriptedTurn(user=(TextBlock(text="t" * 40),), rounds=rounds, final="Done.")
    return Script(system_prompt="You fix bugs.", tools=schemas("bash"), turns=(turn,))


def test_a_masking_all_but_the_last_10_of_50_swe_turns_cuts_input_tokens_by_about_54_percent() -> None:
    script = swe_script()
    assert len(OBSERVATION) == 3360 and len(NOTICE) == 38
    assert 840 / (160 + 840) == 0.84  # observations are 84% of each turn's tokens
    base = len(script.system_prompt) + 40 + tools_bytes(script.tools)
    # Request k (k = 0..50, the last one before the final answer) holds k turns of 4,000 bytes.
    raw = [(base + k * 4000 + 2) // 4 for k in range(51)]
    # SWE-agent keeps the task and the last 10 observations; older ones become the notice.
    masked = [(base + 640 * k + 3360 * min(k, 10) + 38 * max(k - 10, 0) + 2) // 4 for k in range(51)]
    plain = run(none.NoStrategy(), script)
    masking = run(swe_agent.build(LastNObservationsParams(n=10), CTXLAB_TEXTS), script)
    assert plain.reasoning() == raw and masking.reasoning() == masked
    saving = 1 - sum(masked) / sum(raw)
    assert 0.50 <= saving <= 0.58 and round(saving, 3) == 0.532


USER, QUERY, RESULT, FINAL = 100, 17, 12_000, 200  # bytes of each part of a search turn
PLACEHOLDER = len(AnthropicClearParams().placeholder)


def search_turn(k: int) -> ScriptedTurn:
    query = f'{{"query": "q{k:03d}"}}'
    assert len(query) == QUERY
    search = ScriptedCall(tool="web_search", input=query, result=(TextBlock(text="r" * RESULT),))
    return ScriptedTurn(
        user=(TextBlock(text=f"Search {k:03d}".ljust(USER, ".")),),
        rounds=(ScriptedRound(calls=(search,)),),
        final="f" * FINAL,
    )


def search_script(turns: int = 100, system: str = "You search.") -> Script:
    return Script(
        system_prompt=system, tools=schemas("web_search"), turns=tuple(search_turn(k) for k in range(turns))
    )


def search_tokens(base: int, t: int, results: list[int]) -> int:
    """Tokens of a request in turn `t` whose stored results have these sizes."""
    return (base + (t + 1) * USER + len(results) * QUERY + sum(results) + t * FINAL + 2) // 4


def by_hand(base: int, turns: int, *, persist: bool, trigger: int = 100_000, keep: int = 3) -> list[int]:
    """Request tokens before each call of the search workload under clear-tool-uses."""
    stored: list[int] = []  # bytes of each stored result (full, or the placeholder once cleared)
    out = []
    for t in range(turns):
        for answered in (False, True):  # the call that searches, then the one that answers
            if answered:
                stored.append(RESULT)
            cleared = [PLACEHOLDER] * max(len(stored) - keep, 0) + stored[max(len(stored) - keep, 0) :]
            if search_tokens(base, t, stored) > trigger:
                if persist:
                    stored = cleared
                out.append(search_tokens(base, t, cleared))
            else:
                out.append(search_tokens(base, t, stored))
    return out


def test_b_clearing_at_100k_keeping_3_on_a_100_turn_search() -> None:
    script = search_script()
    base = len(script.system_prompt) + tools_bytes(script.tools)
    raw = [(base + (t + 1) * USER + answered * (QUERY + RESULT) + t * (QUERY + RESULT + FINAL) + 2) // 4
           for t in range(100) for answered in (0, 1)]  # fmt: skip
    plain = run(none.NoStrategy(), script)
    assert plain.reasoning() == raw and raw[-1] > 300_000
    persisted = run(anthropic.build(AnthropicClearParams(persist=True), CTXLAB_TEXTS), script)
    assert persisted.reasoning() == by_hand(base, 100, persist=True)
    saws = persisted.reasoning()[70:]
    assert max(saws) <= 100_000 and min(saws) < 15_000  # a sawtooth between ~15k and 100k
    saving = 1 - sum(by_hand(base, 100, persist=True)) / sum(raw)
    assert 0.60 <= saving <= 0.72 and round(saving, 3) == 0.667
    per_request = run(anthropic.build(AnthropicClearParams(), CTXLAB_TEXTS), script)
    assert per_request.reasoning() == by_hand(base, 100, persist=False)
    assert round(1 - sum(per_request.reasoning()) / sum(raw), 3) == 0.829  # Anthropic: 84% fewer tokens


def test_c_clearing_lowers_the_cache_hit_rate_and_clear_at_least_recovers_part_of_it() -> None:
    """A long fixed prompt (85k tokens: documents in the system prompt) keeps the history near the
    trigger, so once past it clearing fires at almost every call, each time breaking the cache at
    the newly cleared result: everything after it is written again. Appending only, a request
    rewrites just its newest turn. `clear_at_least` (12,000 tokens: four results) makes clearing
    wait for four results and clear them at once, one cache break per four calls."""
    script = search_script(turns=40, system="p" * 340_000)
    appending = run(none.NoStrategy(), script).meter.totals
    clearing = run(anthropic.build(AnthropicClearParams(persist=True), CTXLAB_TEXTS), script)
    batched = run(
        anthropic.build(AnthropicClearParams(persist=True, clear_at_least=12_000), CTXLAB_TEXTS), script
    )
    assert clearing.events().count("cleared") > 3 * batched.events().count("cleared")
    assert clearing.meter.totals.hit_rate < batched.meter.totals.hit_rate < appending.hit_rate
    assert round(appending.hit_rate, 3) == 0.982
    assert (
        round(clearing.meter.totals.hit_rate, 3) == 0.955 and round(batched.meter.totals.hit_rate, 3) == 0.968
    )
    # Each clearing writes the prefix from the oldest newly cleared result on: with batching the
    # run writes less to the cache in all, though each batch is a bigger break.
    assert batched.meter.totals.written_tokens < clearing.meter.totals.written_tokens
    # The API's per-request clearing moves the boundary at every request: the lowest hit rate.
    per_request = run(anthropic.build(AnthropicClearParams(), CTXLAB_TEXTS), script).meter.totals
    assert per_request.hit_rate < clearing.meter.totals.hit_rate


def test_c_on_the_search_workload_clearing_costs_cache_hits_it_pays_back_in_tokens() -> None:
    script = search_script()
    appending = run(none.NoStrategy(), script).meter.totals
    persisted = run(anthropic.build(AnthropicClearParams(persist=True), CTXLAB_TEXTS), script).meter.totals
    per_request = run(anthropic.build(AnthropicClearParams(), CTXLAB_TEXTS), script).meter.totals
    assert per_request.hit_rate < persisted.hit_rate < appending.hit_rate
    assert per_request.cost < persisted.cost < appending.cost  # fewer tokens still cost less
