"""Retention in core: matching probes, locating them, scores per kind, snapshots."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.core.world.retention import (
    KindScore,
    OffloadText,
    Probe,
    ProbeState,
    Sources,
    locate,
    probe_found,
    score,
    take_snapshot,
)
from tests.strategies import texts

FACT = Probe(kind="fact", key="db-port", value="5432", where="turn 0 round 0")
RULE = Probe(kind="rule", key="no-coauthor", value="Never add Co-Authored-By.", where="turn 0")
ARTIFACT = Probe(kind="artifact", key="deploy-log", value="logs/deploy-7.log", where="turn 1")


@pytest.mark.parametrize(
    ("probe", "text", "found"),
    [
        (FACT, "config\ndb-port: 5432\nmore", True),
        (FACT, "the port is 5432", False),  # a bare value is too weak for a fact
        (FACT, "db-port = 5432", True),  # key and value both present
        (FACT, "db-port: 5433", False),
        (RULE, "Remember: Never add Co-Authored-By.", True),
        (RULE, "never add co-authored-by", False),  # matching is literal
        (ARTIFACT, "wrote logs/deploy-7.log", True),
        (ARTIFACT, "deploy-log: elsewhere", False),
        (FACT, "", False),
    ],
)
def test_probe_matching_rules(probe: Probe, text: str, found: bool) -> None:
    assert probe_found(probe, text) is found


def test_json_escaped_probes_are_found_in_json_files() -> None:
    quoted = Probe(kind="rule", key="q", value='Say "hi"\tfirst.', where="turn 0")
    payload = json.dumps([{"text": f"a\n{quoted.text}\nb"}], ensure_ascii=False)
    assert quoted.text not in payload
    assert probe_found(quoted, payload)


@given(texts, texts, st.sampled_from([FACT, RULE, ARTIFACT]))
def test_a_planted_line_is_always_found_and_in_json_too(before: str, after: str, probe: Probe) -> None:
    text = f"{before}\n{probe.text}\n{after}"
    assert probe_found(probe, text)
    assert probe_found(probe, json.dumps(text, ensure_ascii=False))
    assert probe_found(probe, json.dumps(text, ensure_ascii=True)) or not probe.text.isascii()


def test_locate_lists_every_place_and_the_cheapest_file() -> None:
    sources = Sources(
        context="x",
        summary=f"S {FACT.text}",
        ledger=f"L {FACT.text}",
        offloads=(
            OffloadText(path="offload/context-0001.json", text=FACT.text, reread_tokens=900),
            OffloadText(path="offload/tool-result-0001.txt", text=FACT.text, reread_tokens=40),
            OffloadText(path="offload/context-0002.json", text="nothing", reread_tokens=5),
        ),
    )
    state = locate(FACT, sources)
    assert state.places == ("summary", "ledger")
    assert state.status == "summary"
    assert state.offloads == ("offload/context-0001.json", "offload/tool-result-0001.txt")
    assert state.reread_tokens == 40


def test_status_order_context_then_offload_then_lost() -> None:
    assert locate(RULE, Sources(context=RULE.text, summary=RULE.text)).status == "context"
    off = Sources(context="", offloads=(OffloadText(path="f", text=RULE.text, reread_tokens=3),))
    assert locate(RULE, off).status == "offload"
    lost = locate(RULE, Sources(context="", summary="", ledger=""))
    assert (lost.status, lost.reread_tokens, lost.offloads) == ("lost", None, ())


def test_scores_per_kind_count_retained_offload_only_and_lost() -> None:
    states = [
        ProbeState(key="a", kind="fact", places=("context",)),
        ProbeState(key="b", kind="fact", offloads=("f",), reread_tokens=10),
        ProbeState(key="c", kind="fact", offloads=("g",), reread_tokens=7),
        ProbeState(key="d", kind="fact"),
        ProbeState(key="e", kind="rule", places=("summary",), offloads=("f",), reread_tokens=10),
    ]
    scores = score(states)
    assert scores.facts == KindScore(probes=4, retained=1, offload_only=2, lost=1, reread_tokens=17)
    assert (scores.facts.retention, scores.facts.offload_share) == (0.25, 0.5)
    assert scores.rules == KindScore(probes=1, retained=1)  # a visible probe needs no re-read
    assert scores.artifacts.retention is None and scores.artifacts.offload_share is None


def test_snapshot_counts_delivered_probes_only() -> None:
    sources = Sources(context=FACT.text)
    snap = take_snapshot(
        (FACT, RULE, ARTIFACT), frozenset({"db-port", "no-coauthor"}), sources, before_call=7, compressions=2
    )
    assert [p.key for p in snap.probes] == ["db-port", "no-coauthor"]
    assert snap.pending == ("deploy-log",)
    assert (snap.before_call, snap.compressions, snap.final) == (7, 2, False)
    assert snap.scores.facts.retained == 1 and snap.scores.rules.lost == 1
    assert snap.scores.artifacts.probes == 0
    assert snap.state_of("db-port").status == "context"
    with pytest.raises(KeyError, match="deploy-log"):
        snap.state_of("deploy-log")
