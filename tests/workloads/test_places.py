"""A problem inside a transcript written as one JSON document over many lines is told at the
line of the item being read, not at the document's first line (`ctxlab.workloads.places`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.workloads.importers import import_file
from ctxlab.workloads.places import line_at, offset_of, path_to
from ctxlab.workloads.trace import TraceError

DATA = Path(__file__).parents[1] / "data" / "importers"

_KEYS = st.text(alphabet='ab"\\é\n', max_size=3)
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | _KEYS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_KEYS, inner, max_size=4),
    max_leaves=20,
)


def _places(value: Any, path: tuple[str | int, ...] = ()) -> list[tuple[tuple[str | int, ...], Any]]:
    """Every path in `value` with the value there."""
    found = [(path, value)]
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        found.extend(_places(item, (*path, key)))
    return found


@given(_JSON, st.sampled_from([None, 0, 2, "\t"]), st.booleans())
def test_every_value_is_found_where_its_text_starts(
    value: Any, indent: int | str | None, spaced: bool
) -> None:
    text = json.dumps(value, indent=indent, separators=(", ", ": ") if spaced else (",", ":"))
    decoder = json.JSONDecoder()
    for path, there in _places(value):
        offset = offset_of(text, path)
        assert offset is not None
        assert decoder.raw_decode(text, offset)[0] == there
        if isinstance(there, dict | list):
            assert path_to(value, there) == path


def test_a_place_the_text_does_not_hold_is_none() -> None:
    text = '{"a": [1, 2], "b": {"c": 3}}'
    assert [offset_of(text, path) for path in (("a", 2), ("c",), ("b", 0), ("a", "x"), (0,))] == [None] * 5
    assert offset_of("[1, 2", (1,)) is not None and offset_of('{"a": ', ("a",)) is None


def test_a_repeated_key_is_found_at_its_last_value_as_json_reads_it() -> None:
    text = '{"a": 1,\n "a": [2,\n 3]}'
    assert json.loads(text) == {"a": [2, 3]} and line_at(text, 5, ("a", 1)) == 7


def test_path_to_finds_the_very_object_not_an_equal_one() -> None:
    doc = {"x": [{}, {}]}
    assert path_to(doc, doc["x"][1]) == ("x", 1) and path_to(doc, {}) is None


ROBOT = {"marker": 1, "role": "robot", "content": "beep"}


@pytest.mark.parametrize(
    ("name", "items", "bad"),
    [
        ("swe-agent/function_calling_simple.traj", ("history",), ROBOT),
        ("mini-swe-agent/v2-toolcall.traj.json", ("messages",), ROBOT),
        ("openhands/basic.json", (), {"marker": 1, "action": "teleport", "source": "agent"}),
        (
            "openhands/sdk-events-context.json",
            (),
            {"marker": 1, "kind": "TeleportEvent", "source": "agent"},
        ),
        ("tau-bench/results.json", (0, "traj"), ROBOT),
        ("tau2/results.json", ("simulations", 0, "messages"), ROBOT),
        ("anthropic-messages/server-tools.json", ("request", "messages"), ROBOT),
        (
            "langgraph/checkpoint.json",
            ("channel_values", "messages"),
            {"marker": 1, "type": "ai", "tool_calls": 5},
        ),
    ],
)
def test_a_bad_item_of_a_document_over_many_lines_is_told_at_its_own_line(
    tmp_path: Path, name: str, items: tuple[str | int, ...], bad: dict[str, Any]
) -> None:
    document = json.loads((DATA / name).read_text(encoding="utf-8"))
    listed = document
    for key in items:
        listed = listed[key]
    listed[2] = bad
    text = json.dumps(document, indent=2)
    path = tmp_path / Path(name).name
    path.write_text("\n" + text + "\n", encoding="utf-8")  # a blank first line: lines are the file's
    marker = 1 + next(n for n, line in enumerate(text.splitlines(), start=1) if '"marker"' in line)
    with pytest.raises(TraceError) as refused:
        import_file(path, name.split("/", maxsplit=1)[0])
    assert refused.value.line == marker - 1, str(refused.value)  # the item's "{", the line before
