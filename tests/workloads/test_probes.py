"""Retention probes: where they go, what they add, and the errors for places a script lacks."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.core.messages.blocks import DataBlock, TextBlock, utf8_len
from ctxlab.core.world.script import Script, ScriptedCall, ScriptedRound, ScriptedTurn
from ctxlab.problems import WorkloadError
from ctxlab.workloads.format import ProbeSpec
from ctxlab.workloads.probes import Place, Probe, insert_line, parse_where, plant, plant_one

IMAGE = DataBlock(media_type="image/png", source="https://x.invalid/a.png")
SCRIPT = Script(
    system_prompt="You are careful.",
    turns=(
        ScriptedTurn(
            user=(TextBlock(text="line one\nline two\nline three"),),
            rounds=(
                ScriptedRound(
                    text="Looking.",
                    calls=(
                        ScriptedCall(tool="Read", input="{}", result=(TextBlock(text="a\nb\nc\nd"),)),
                        ScriptedCall(tool="shot", input="{}", result=(IMAGE,)),
                    ),
                ),
                ScriptedRound(calls=(ScriptedCall(tool="TaskList"),)),
                ScriptedRound(),
            ),
            final="Done.",
        ),
        ScriptedTurn(user=(IMAGE,), final=""),
    ),
)


def fact(where: str, kind: str = "fact", key: str = "db-port") -> Probe:
    return Probe(kind=kind, key=key, value="5432", where=where)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("where", "place"),
    [
        ("system", Place(target="system")),
        ("turn 1", Place(target="user", turn=1)),
        ("Turn -1 user", Place(target="user", turn=-1)),
        ("turn 0 final", Place(target="final")),
        ("turn 0 round 2", Place(target="round", round=2)),
        ("turn 0 round 0 text", Place(target="text")),
        ("turn 0  round 0 call 1", Place(target="result", call=1)),
    ],
)
def test_where_grammar(where: str, place: Place) -> None:
    assert parse_where(where) == place


@pytest.mark.parametrize(
    "where", ["", "turn", "turn x", "round 0", "turn 0 round", "turn 0 call 1", "system 1"]
)
def test_unreadable_where_says_what_is_allowed(where: str) -> None:
    with pytest.raises(ValueError, match=r"cannot read where .*; use 'system', 'turn T'"):
        parse_where(where)


def test_a_fact_goes_inside_the_result_of_the_rounds_first_call() -> None:
    planted = plant_one(SCRIPT, fact("turn 0 round 0"))
    result = planted.turns[0].rounds[0].calls[0].result
    assert result == (TextBlock(text="a\ndb-port: 5432\nb\nc\nd"),)
    assert planted.turns[0].rounds[0].calls[1] == SCRIPT.turns[0].rounds[0].calls[1]
    assert planted.turns[1] == SCRIPT.turns[1] and planted.system_prompt == SCRIPT.system_prompt


def test_every_place_takes_a_probe() -> None:
    line = "db-port: 5432"
    assert line in plant_one(SCRIPT, fact("system")).system_prompt
    assert line in plant_one(SCRIPT, fact("turn 0 final")).turns[0].final
    assert plant_one(SCRIPT, fact("turn 0 round 0 text")).turns[0].rounds[0].text == "Looking.\n" + line
    assert plant_one(SCRIPT, fact("turn 0 round -1")).turns[0].rounds[2].text == line  # no calls: its text
    assert plant_one(SCRIPT, fact("turn 1 final")).turns[1].final == line
    shot = plant_one(SCRIPT, fact("turn 0 round 0 call 1")).turns[0].rounds[0].calls[1]
    assert shot.result == (TextBlock(text=line), IMAGE)
    assert plant_one(SCRIPT, fact("turn -1")).turns[1].user == (TextBlock(text=line), IMAGE)
    user = plant_one(SCRIPT, fact("turn 0 user")).turns[0].user
    assert user == (TextBlock(text="line one\ndb-port: 5432\nline two\nline three"),)


def test_rules_and_artifacts_render_as_users_and_tools_write_them() -> None:
    rule = Probe(kind="rule", key="no-coauthor", value="Never add Co-Authored-By lines.", where="turn 0")
    planted = plant(
        SCRIPT, [rule, Probe(kind="artifact", key="path", value="/srv/x.db", where="turn 0 round 0")]
    )
    assert "Never add Co-Authored-By lines." in planted.script.turns[0].user[0].text  # type: ignore[union-attr]
    assert "path: /srv/x.db" in planted.script.turns[0].rounds[0].calls[0].result[0].text  # type: ignore[index,union-attr]
    assert planted.probes[0] is rule


def test_places_the_script_lacks_are_located_errors() -> None:
    probes = [
        fact("turn 5", key="a"),
        fact("turn 0 round 9", key="b"),
        fact("turn 0 round 0 call 2", key="c"),
        fact("turn 0 round 1 call 0", key="d"),
        fact("turn 0 round 0", kind="rule"),
        fact("turn 0 user", key="e"),
    ]
    with pytest.raises(WorkloadError) as caught:
        plant(SCRIPT, probes)
    messages = [str(p) for p in caught.value.problems]
    assert messages == [
        "probes[0].where: cannot plant at 'turn 5': turn 5 does not exist (there are 2); use turn 0 to 1",
        "probes[1].where: cannot plant at 'turn 0 round 9': round 9 does not exist (there are 3); "
        "use round 0 to 2",
        "probes[2].where: cannot plant at 'turn 0 round 0 call 2': call 2 does not exist (there are 2); "
        "use call 0 to 1",
        "probes[3].where: cannot plant at 'turn 0 round 1 call 0': call 0 (TaskList) runs a built-in tool, "
        "so its result cannot hold a probe; plant it in another call's result or in the round's text "
        "('turn T round R text')",
        "probes[4].where: rule 'db-port' is a user constraint; put it in 'turn T user' or 'system'",
    ]


def test_a_key_an_earlier_probe_has_is_refused_at_the_later_one() -> None:
    """Retention is told by key: two probes of one key would count one's finding for both."""
    with pytest.raises(WorkloadError) as caught:
        plant(SCRIPT, [fact("system", key="k"), fact("turn 0 user", kind="rule", key="k")], [fact("system")])
    assert [str(p) for p in caught.value.problems] == [
        "probes[1].key: repeats the key 'k' of probes[0]; give each probe a key of its own (retention "
        "is measured by key)"
    ]
    with pytest.raises(WorkloadError) as caught:
        plant(SCRIPT, [fact("system")], [fact("turn 0 user")])
    assert str(caught.value.problems[0]).startswith(
        "probes[0].key: repeats the key 'db-port' of the generator's"
    )


@given(st.text(alphabet="ab\n中", max_size=40), st.text(alphabet="xyz: 5", min_size=1, max_size=10))
def test_insertion_adds_exactly_one_line_at_a_line_boundary(text: str, line: str) -> None:
    planted = insert_line(text, line)
    if not text:
        assert planted == line
    elif "\n" not in text:
        assert planted == f"{text}\n{line}"
    else:
        i = planted.index(line)  # the alphabets are disjoint: the line occurs once
        assert planted[i - 1] == "\n" and planted[i + len(line)] == "\n"
        assert planted[:i] + planted[i + len(line) + 1 :] == text
    assert utf8_len(planted) == utf8_len(text) + utf8_len(line) + (1 if text else 0)


def test_probe_spec_checks_where_and_defaults_to_a_fact() -> None:
    spec = ProbeSpec.model_validate({"key": "db-port", "value": "5432", "where": "turn 0 round 0"})
    assert spec.probe() == fact("turn 0 round 0")
    with pytest.raises(ValueError, match="cannot read where"):
        ProbeSpec.model_validate({"key": "k", "value": "v", "where": "somewhere"})
    with pytest.raises(ValueError, match="Input should be a valid string"):
        ProbeSpec.model_validate({"key": "db-port", "value": 5432, "where": "turn 0"})
