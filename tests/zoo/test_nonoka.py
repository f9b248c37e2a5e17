"""The nonoka preset through the engine: microcompact, budget zones, eviction with the evidence
ledger, the optional summary and its breaker, prompt-only trimming, and the futile breaker."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
from pydantic import ValidationError

from ctxlab.core.compaction.budget import BudgetParams
from ctxlab.core.events import Event, EventKind
from ctxlab.core.messages.blocks import TextBlock, ToolResultBlock
from ctxlab.core.world.artifacts import Artifact, reference_text
from ctxlab.core.world.script import ScriptedRound
from ctxlab.presets.entries import entry_params
from ctxlab.presets.nonoka.preset import PRESET, NonokaParams, artifact_id
from ctxlab.presets.registry import ENTRIES
from ctxlab.texts import CTXLAB_TEXTS
from tests.zoo.runs import Ran, one_turn, results_of, run, text, tool_call, turns

HEADER = "[Evidence ledger: tool calls evicted from the context]\n"


def bash(k: int, size: int = 6000, error: bool = False) -> ScriptedRound:
    return ScriptedRound(
        calls=(tool_call("bash", f'{{"command": "make test-{k}"}}', text(size, tag=chr(97 + k)), error),)
    )


def test_superseded_reads_become_placeholders_in_the_stored_history() -> None:
    def read(path: str, body: str) -> ScriptedRound:
        return ScriptedRound(
            calls=(tool_call("Read", json.dumps({"file_path": path}), (TextBlock(text=body),)),)
        )

    ran = run(PRESET.strategy(), one_turn(read("a.py", "v1"), read("b.py", "b"), read("a.py", "v2")))
    assert [r.text for r in results_of(ran)] == ["[superseded by a newer read result]", "b", "v2"]
    assert ran.events() == ["microcompacted"]  # once: the placeholder is already there next time


def test_over_6144_tokens_whole_units_are_evicted_down_to_4096_and_the_ledger_keeps_them() -> None:
    ran = run(PRESET.strategy(), one_turn(*(bash(k) for k in range(8))))
    sizes = ran.reasoning()
    assert sizes == [297, 1803, 3310, 4816, 3761, 5268, 3310, 4816, 3761]
    assert max(sizes) <= 6144  # checked before every call: over the trigger means compacted first
    after = [c.tokens["as_sent"] for c in ran.outcome.calls if Event(EventKind.EVICTED) in c.events]
    assert after and all(size <= 4096 for size in after)
    assert ran.violations() == []
    system, ledger, user, *_ = ran.sent()[-1]
    assert (system.role, ledger.role, user.role) == ("system", "system", "user")  # latest user kept
    ledger_text = ledger.blocks[0].text  # type: ignore[union-attr]
    assert ledger_text.startswith(HEADER)
    items = json.loads(ledger_text[len(HEADER) :])
    assert [(i["tool"], i["arguments"], i["tool_call_id"], i["exit_code"]) for i in items] == [
        ("bash", {"command": "make test-4"}, "call-0005", 0),
        ("bash", {"command": "make test-5"}, "call-0006", 0),
    ]
    assert items[0]["result"] == "e" * 360 + "\n[... middle omitted ...]\n" + "e" * 360
    assert PRESET.strategy().ledger_text(ran.outcome.state) == ledger_text  # type: ignore[attr-defined]


def test_the_ledger_is_dropped_whole_when_the_request_would_still_be_over_the_target() -> None:
    ran = run(PRESET.strategy(), one_turn(*(bash(k) for k in range(8))))
    (dropped,) = [c for c in ran.outcome.calls if Event(EventKind.LEDGER_DROPPED) in c.events]
    assert dropped.call_index == 6 and all(m.role != "system" for m in ran.sent()[6][1:])


def ledgers(ran: Ran) -> list[str]:
    """The ledger each reasoning request carried ('' when none)."""
    return [next((m.blocks[0].text for m in sent[1:] if m.role == "system"), "") for sent in ran.sent()]  # type: ignore[union-attr]


def test_the_ledger_is_capped_at_12_kb_by_dropping_its_oldest_items() -> None:
    budget = BudgetParams(max_tokens=60_000, reserve_output_tokens=20_000, compaction_buffer_tokens=10_000)
    strategy = PRESET.build(NonokaParams(budget=budget), CTXLAB_TEXTS)
    ran = run(strategy, one_turn(*(bash(k % 26, 36_000) for k in range(40))))
    sizes = [len(t.encode("utf-8")) for t in ledgers(ran)]
    assert max(sizes) <= 12 * 1024 and sizes[-1] > 11 * 1024  # full, under the cap
    first_ids = [json.loads(t[len(HEADER) :])[0]["tool_call_id"] for t in ledgers(ran) if t]
    assert first_ids[0] == "call-0001" and first_ids[-1] > "call-0010"  # the oldest items went first
    assert ran.events().count("ledger_dropped") == 0


def test_ledger_items_carry_exit_codes_of_shell_tools_and_artifact_refs() -> None:
    made = Artifact(artifact_id="art-007", task_id="t", step_id="collect", kind="raw", payload="x" * 9000)
    reference = (TextBlock(text=reference_text(made) + " " * 6000),)
    rounds = [
        bash(0, error=True),
        ScriptedRound(calls=(tool_call("collect_data", "{}", reference),)),
        *(bash(k) for k in range(2, 9)),
    ]
    ran = run(PRESET.strategy(), one_turn(*rounds))
    first = json.loads(next(t for t in ledgers(ran) if t)[len(HEADER) :])
    assert (first[0]["tool"], first[0]["exit_code"], first[0]["artifact_ref"]) == ("bash", 1, None)
    assert (first[1]["tool"], first[1]["exit_code"], first[1]["artifact_ref"]) == (
        "collect_data",
        None,
        "art-007",
    )
    assert artifact_id("plain text") is None


def test_the_summary_replaces_the_oldest_third_and_eviction_follows_when_needed() -> None:
    strategy = PRESET.build(NonokaParams(summarize=True), CTXLAB_TEXTS)
    ran = run(strategy, one_turn(*(bash(k, 3000) for k in range(12))))
    summaries = [c for c in ran.outcome.calls if c.kind == "summary"]
    assert summaries and "compressed" in ran.events()
    assert str(ran.outcome.state.summary).startswith("[History summary]\n")
    assert ran.sent()[-1][1].role == "user" and "[History summary]" in str(ran.sent()[-1][1].blocks)
    assert max(ran.reasoning()) <= 6144 and ran.violations() == []


def test_three_summary_failures_in_a_row_turn_the_summarizer_off_for_the_run() -> None:
    strategy = PRESET.build(NonokaParams(summarize=True), CTXLAB_TEXTS)
    ran = run(strategy, one_turn(*(bash(k, 3000) for k in range(24))), fail_on=range(1, 100))
    summaries = [c for c in ran.outcome.calls if c.kind == "summary"]
    assert len(summaries) == 3 and ran.events().count("summary_disabled") == 1
    assert ran.events().count("summary_failed") == 3
    assert ran.events().count("evicted") > 3  # the deterministic compactor takes over every time
    assert max(ran.reasoning()) <= 6144


def test_prompt_only_trimming_keeps_each_request_within_the_window_and_the_history_whole() -> None:
    ran = run(PRESET.strategy(), one_turn(*(bash(k) for k in range(8))), window=3000)
    assert max(ran.reasoning()) <= 3000 and "trimmed" in ran.events()
    stored = results_of(ran)
    sent = [b for m in ran.sent()[-1] for b in m.blocks if isinstance(b, ToolResultBlock)]
    assert len(sent) < len(stored)  # the request lacks what the stored history still holds
    assert ran.violations("nonoka") == []


def test_a_fixed_floor_over_the_trigger_is_flagged_and_compaction_stops_until_the_next_turn() -> None:
    """kimi-code #2498 / pipecat #5505: a system prompt above the trigger keeps it always true."""
    script = turns(
        tuple(bash(k, 400) for k in range(5)), tuple(bash(k, 400) for k in range(5, 10)), system="s" * 26_000
    )
    ran = run(PRESET.strategy(), script)
    warnings = ran.events().count(EventKind.LOOP_WARNING)
    assert warnings == 4 and ran.events().count(EventKind.COMPACTION_STOPPED) == 2
    assert all("at or above the trigger 6145" in w for w in ran.outcome.warnings if "floor" in w)


def test_without_the_futile_breaker_the_floor_makes_every_call_compact_again() -> None:
    script = turns(tuple(bash(k, 400) for k in range(5)), system="s" * 26_000)
    strategy = replace(PRESET.strategy(), futile_limit=0)  # type: ignore[type-var]
    ran = run(strategy, script)
    assert ran.events().count(EventKind.LOOP_WARNING) == len(ran.outcome.calls)


def test_a_fact_in_an_evicted_result_stays_in_the_ledger_until_the_ledger_is_dropped() -> None:
    from ctxlab.core.world.retention import Probe
    from ctxlab.core.world.script import assign_call_ids
    from ctxlab.engine.session import run_script
    from ctxlab.models.scripted import ScriptModel
    from ctxlab.models.summarizers import FixedSummarizer
    from tests.zoo.runs import FIELDS

    fact = (TextBlock(text="db-port: 5432\n" + "p" * 5986),)
    rounds = [
        ScriptedRound(calls=(tool_call("bash", '{"command": "cat cfg"}', fact),)),
        *(bash(k) for k in range(1, 8)),
    ]
    script = assign_call_ids(one_turn(*rounds))
    probe = Probe(kind="fact", key="db-port", value="5432", where="turn 0 round 0")
    outcome = run_script(
        script,
        PRESET.strategy(),
        model=ScriptModel(script),
        summarizer=FixedSummarizer(fields=FIELDS),
        texts=CTXLAB_TEXTS,
        context_size=200_000,
        probes=(probe,),
    )
    delivered = [s for s in outcome.retention if "db-port" not in s.pending]
    places = [s.state_of("db-port").places for s in delivered]
    # Evicted at the first compaction, the fact is in the ledger (sent as a system message, so
    # visible in the request too); the next eviction overflows the target with the ledger, which
    # nonoka then drops whole, and the fact with it.
    assert places == [("context", "ledger"), (), (), ()]
    dropped = [c for c in outcome.calls if Event(EventKind.LEDGER_DROPPED) in c.events]
    assert dropped and dropped[0].call_index == delivered[1].before_call


@pytest.mark.parametrize(
    ("settings", "loc", "needle"),
    [
        ({"budget": {"max_tokens": -1}}, ("budget", "max_tokens"), "refuse a value below 1"),
        ({"budget": {"reserve_output_tokens": 0}}, ("budget", "reserve_output_tokens"), "below 1"),
        ({"budget": {"compaction_buffer_tokens": -1}}, ("budget", "compaction_buffer_tokens"), "below 0"),
        ({"evict": {"max_bytes": -1}}, ("evict", "max_bytes"), "not negative"),
        ({"evict": {"preview_chars": -1}}, ("evict", "preview_chars"), "not negative"),
        ({"evict": {"preview_side": 0}}, ("evict", "preview_side"), "text[-0:]"),
        ({"evict": {"preview_chars": 100}}, ("evict", "preview_side"), "below preview_chars / 2"),
        ({"evict": {"raw_arguments_chars": -1}}, ("evict", "raw_arguments_chars"), "not negative"),
        ({"microcompact": {"command_chars": -1}}, ("microcompact", "command_chars"), "use 1 or more"),
        ({"microcompact": {"command_chars": 0}}, ("microcompact", "command_chars"), "key every command"),
        ({"trim": {"keep_last": -1}}, ("trim", "keep_last"), "not negative"),
        ({"trim": {"keep_last": 0}}, ("trim", "keep_last"), "1 or more"),
        ({"summary_share": -1}, ("summary_share",), "above 0 and at most 1"),
        ({"summary_share": 0}, ("summary_share",), "above 0 and at most 1"),
        ({"summary_share": 1e18}, ("summary_share",), "above 0 and at most 1"),
        ({"summary_failure_limit": 0}, ("summary_failure_limit",), "1 or more"),
        ({"summary_failure_limit": -3}, ("summary_failure_limit",), "1 or more"),
    ],
)
def test_values_nonoka_cannot_mean_are_refused_at_their_setting(
    settings: dict[str, Any], loc: tuple[str, ...], needle: str
) -> None:
    """Before, each of these loaded and ran (a negative `keep_last` acted as 0, a share of 1e18
    summarized everything, a limit of 0 acted as 1)."""
    with pytest.raises(ValidationError) as caught:
        ENTRIES["nonoka"].model_validate({"preset": "nonoka", **settings})
    [error] = caught.value.errors()
    assert error["loc"] == loc and needle in str(error["ctx"]["error"])


def test_the_edges_of_nonoka_s_ranges_load() -> None:
    edges = {
        "budget": {"max_tokens": 1, "reserve_output_tokens": 1, "compaction_buffer_tokens": 0},
        "evict": {"max_bytes": 0, "preview_chars": 3, "preview_side": 1, "raw_arguments_chars": 0},
        "microcompact": {"command_chars": 1},
        "trim": {"keep_last": 1},
        "summary_share": 1,
        "summary_failure_limit": 1,
    }
    params = entry_params(ENTRIES["nonoka"].model_validate({"preset": "nonoka", **edges}))
    assert (params.summary_share, params.trim.keep_last, params.evict.max_bytes) == (1, 1, 0)
