"""Located errors: every mistake in a scenario file names file, line, column, field and fix."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, Field

from ctxlab.problems import ScenarioError
from ctxlab.scenarios import located
from ctxlab.scenarios.located import (
    _NOT_PLAIN,
    Located,
    _Positions,
    _read_events,
    compose_yaml,
    load,
    parse_yaml,
)
from ctxlab.scenarios.text import read_text


class Inner(BaseModel):
    model_config = ConfigDict(extra="forbid")
    trigger_ratio: float = Field(default=0.8, gt=0, le=0.9)
    reserve_ratio: float = 0.1


class Outer(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    items: list[Inner] = []
    context: Inner = Inner()


def write(tmp_path: Path, text: str | bytes, name: str = "s.yaml") -> Path:
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


def problems(path: Path) -> list[str]:
    with pytest.raises(ScenarioError) as caught:
        load(path, Outer)
    return [str(p) for p in caught.value.problems]


def test_out_of_range_value_is_located(tmp_path: Path) -> None:
    path = write(tmp_path, "name: x\ncontext:\n  trigger_ratio: 1.0\n")
    (message,) = problems(path)
    assert message == f"{path}:3:3: context.trigger_ratio: 1.0 is above the maximum 0.9; use 0.9 or less"


def test_unknown_key_suggests_the_nearest(tmp_path: Path) -> None:
    path = write(tmp_path, "name: x\nitems:\n  - triger_ratio: 0.5\n")
    (message,) = problems(path)
    assert (
        f"{path}:3:5: items[0].triger_ratio: unknown key 'triger_ratio' (did you mean 'trigger_ratio'?)"
        in message
    )


def test_wrong_type_and_missing_field(tmp_path: Path) -> None:
    path = write(tmp_path, "context:\n  reserve_ratio: lots\n")
    found = problems(path)
    assert any(":1:1: name: is required but missing" in m for m in found)
    assert any(":2:3: context.reserve_ratio: 'lots' is invalid" in m for m in found)


def test_malformed_yaml_is_located(tmp_path: Path) -> None:
    (message,) = problems(write(tmp_path, "name: x\ncontext: [1, 2\n"))
    assert "invalid YAML" in message and ":3:" in message


@pytest.mark.parametrize(
    "tag", ["!!python/object/apply:os.system ['echo hi']", "!custom 3", "!!python/name:os.system"]
)
def test_object_tags_are_refused(tmp_path: Path, tag: str) -> None:
    (message,) = problems(write(tmp_path, f"name: {tag}\n"))
    assert "not allowed" in message or "invalid YAML" in message


def test_duplicate_keys_are_refused(tmp_path: Path) -> None:
    (message,) = problems(write(tmp_path, "name: a\nname: b\n"))
    assert ":2:1: name: appears twice" in message


@pytest.mark.parametrize(
    ("content", "needle"),
    [(b"", "is empty"), (b"\x00\x01binary", "is binary"), (b"\xff\xfe bad", "not UTF-8")],
)
def test_files_that_are_not_yaml_text(tmp_path: Path, content: bytes, needle: str) -> None:
    with pytest.raises(ScenarioError, match=needle):
        read_text(write(tmp_path, content))


def test_comment_only_file_is_empty(tmp_path: Path) -> None:
    (message,) = problems(write(tmp_path, "   \n# only a comment\n"))
    assert ":1:1: is empty" in message


def test_directory_missing_and_huge_files(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="is a directory"):
        read_text(tmp_path)
    with pytest.raises(ScenarioError, match="no such file"):
        read_text(tmp_path / "nope.yaml")
    with pytest.raises(ScenarioError, match="over the 2,000,000-byte limit"):
        read_text(write(tmp_path, b"a: 1\n" * 500_000))


def test_valid_file_loads_with_positions(tmp_path: Path) -> None:
    path = write(tmp_path, "name: ok\nitems:\n  - trigger_ratio: 0.5\n")
    assert load(path, Outer).items[0].trigger_ratio == 0.5
    located = parse_yaml(path.read_text(), str(path))
    assert located.where(("items", 0, "trigger_ratio")) == (3, 5)
    assert located.where(("items", 0, "nothing", "deeper")) == (3, 5)


def test_a_plain_documents_positions_are_read_when_first_asked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    reads: list[bool] = []
    real = located._read_events

    def counted(text: str, positions: dict[object, tuple[int, int]] | None = None) -> object:
        reads.append(positions is not None)
        return real(text, positions)  # type: ignore[arg-type]

    monkeypatch.setattr(located, "_read_events", counted)
    doc = parse_yaml("name: ok\nitems:\n  - trigger_ratio: 2\n", "s.yaml")
    assert reads == [False] and isinstance(doc.positions, _Positions)
    with pytest.raises(ScenarioError) as raised:
        located.validate(doc, Outer)
    assert [str(p).split(": ")[0] for p in raised.value.problems] == ["s.yaml:3:5"]
    assert doc.where(("name",)) == (1, 1) and reads == [False, True]  # read once


def test_dates_stay_as_written(tmp_path: Path) -> None:
    located = parse_yaml("start: 2026-01-01T00:00:00\n", "x")
    assert located.data == {"start": "2026-01-01T00:00:00"}


PLAIN = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)


@given(PLAIN, st.sampled_from([None, False, True]))
def test_plain_data_reads_as_the_safe_loader_reads_it(data: object, flow: bool | None) -> None:
    """Every scalar goes through the safe constructor's own function for its tag, in any style."""
    text = yaml.safe_dump({"doc": data}, default_flow_style=flow, allow_unicode=True)
    assert parse_yaml(text, "x").data == yaml.safe_load(text)


def test_quoted_and_tagged_scalars_read_as_written() -> None:
    text = "a: '1'\nb: !!str 2\nc: 0x1F\nd: 1_000\ne: 1.5e3\nf: ~\ng: yes\nh: 'true'\ni: 2026-01-01\n"
    located = parse_yaml(text, "x")
    assert located.data == {**yaml.safe_load(text), "i": "2026-01-01"}
    assert located.where(("h",)) == (8, 1)


def read_both(text: str) -> tuple[object, object]:
    """What `parse_yaml` and `compose_yaml` make of `text`: (data, positions in order) or the
    problems raised."""

    def read(parse: Callable[[str, str], Located]) -> object:
        try:
            located = parse(text, "x")
        except ScenarioError as error:
            return [str(p) for p in error.problems]
        return located.data, list(located.positions.items())

    return read(parse_yaml), read(compose_yaml)


@given(PLAIN, st.sampled_from([None, False, True]), st.sampled_from([None, "'", '"']))
def test_a_plain_document_is_read_from_events_as_composed(
    data: object, flow: bool | None, quote: str | None
) -> None:
    text = yaml.safe_dump(
        {"doc": data, "n": [1, 1.5, True, None]}, default_flow_style=flow, default_style=quote
    )
    assert _read_events(text) is not _NOT_PLAIN  # the event reading takes it
    fast, composed = read_both(text)
    assert fast == composed


UNUSUAL = [
    "a: &x {b: 1}\nc: *x\n",
    "a: &x 1\nc: *x\n",
    "a: *nowhere\n",
    "base: &b {k: 1}\nmore: {<<: *b, j: 2}\n",
    "a: !!python/object:os.system {}\n",
    "a: !custom 1\n",
    "a: !!map {b: 1}\n",
    "a: !!seq [1]\n",
    "? [1, 2]\n: x\n",
    "? {k: 1}\n: x\n",
    "a: 1\na: 2\n",
    "a: {b: 1, b: 2}\n",
    "a: 1\n---\nb: 2\n",
    "a: [1, 2\n",
    "a: 'open\n",
    "\ta: 1\n",
    "a: 1\n b: 2\n",
    "# only a comment\n",
    "--- \n...\n",
    "plain scalar\n",
    "- 1\n- [2, {c: d}]\n",
    "a: !!str 2\nb: !!int '3'\nc: ! 4\n",
    "a: !!float 1\nb: !!bool yes\n",
    "a: !!int x\n",
    'a: !!int ""\n',
    "a: !!float\n",
]


@pytest.mark.parametrize("text", UNUSUAL)
def test_anything_else_reads_as_composed(text: str) -> None:
    fast, composed = read_both(text)
    assert fast == composed


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        ("!!int x", "int"),
        ("!!bool maybe", "bool"),
        ("!!float 1e", "float"),
        ('!!int ""', "int"),  # the constructors index an empty value's first character
        ("!!float", "float"),
        ("!!int 0x", "int"),
    ],
)
def test_a_value_its_tag_refuses_is_a_located_problem(tmp_path: Path, value: str, kind: str) -> None:
    [problem] = problems(write(tmp_path, f"name: ok\nitems:\n  - trigger_ratio: {value}\n"))
    assert problem.startswith(f"{tmp_path / 's.yaml'}:3:20: items[0].trigger_ratio: ")
    assert f"is not a YAML {kind}; write one, or remove the tag" in problem


@pytest.mark.parametrize(
    ("value", "why"),
    [
        (".inf", ".inf is not a finite number"),
        ("-.inf", "-.inf is not a finite number"),
        (".nan", ".nan is not a finite number"),
        (str(2**63), "is out of range; results hold whole numbers"),
        (str(-(2**63) - 1), "is out of range; results hold whole numbers"),
    ],
)
def test_a_number_results_cannot_hold_is_a_located_problem(tmp_path: Path, value: str, why: str) -> None:
    [problem] = problems(write(tmp_path, f"name: ok\nitems:\n  - reserve_ratio: {value}\n"))
    assert (
        problem.startswith(f"{tmp_path / 's.yaml'}:3:20: items[0].reserve_ratio: {value} ") and why in problem
    )


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("017000", "reads as the octal number 7680 in YAML; write it without its leading zeros"),
        ("-0_17", "reads as the octal number -15 in YAML"),
        ("2:13:20", "reads as the base-60 number 8000 in YAML; write the number itself, or quote it"),
        ("1:30.5", "reads as the base-60 number 90.5 in YAML"),
    ],
)
def test_a_number_only_yaml_1_1_reads_so_is_a_located_problem(tmp_path: Path, value: str, why: str) -> None:
    """A leading zero or colons give another number than the digits written, in YAML 1.1 alone."""
    [problem] = problems(write(tmp_path, f"name: ok\nitems:\n  - reserve_ratio: {value}\n"))
    assert (
        problem.startswith(f"{tmp_path / 's.yaml'}:3:20: items[0].reserve_ratio: {value} ") and why in problem
    )


def test_numbers_written_as_every_reader_reads_them_are_not_refused() -> None:
    text = "a: 018000\nb: 0\nc: 0x1F\nd: '017'\ne: 10:30 am\nf: 1_000\n"
    assert parse_yaml(text, "x").data == {
        "a": "018000",
        "b": 0,
        "c": 31,
        "d": "017",
        "e": "10:30 am",
        "f": 1000,
    }


def test_the_largest_64_bit_integers_read() -> None:
    text = f"a: {2**63 - 1}\nb: {-(2**63)}\n"
    assert parse_yaml(text, "x").data == {"a": 2**63 - 1, "b": -(2**63)}


def test_nesting_past_the_limit_is_a_located_problem() -> None:
    deep = "a: " + "[" * (located.MAX_DEPTH + 1) + "]" * (located.MAX_DEPTH + 1) + "\n"
    with pytest.raises(ScenarioError, match=f"nests deeper than {located.MAX_DEPTH} levels"):
        parse_yaml(deep, "x")
    very_deep = "a: " + "[" * 5000 + "]" * 5000 + "\n"  # past the stack of the pure-Python parser
    with pytest.raises(ScenarioError, match="nests deeper than"):
        parse_yaml(very_deep, "x")
    at_limit = "a: " + "[" * (located.MAX_DEPTH - 1) + "]" * (located.MAX_DEPTH - 1) + "\n"
    assert parse_yaml(at_limit, "x").data["a"] is not None


def test_aliases_that_expand_past_the_limit_are_a_located_problem(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(located, "MAX_VALUES", 500)
    bomb = "a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
    assert len(parse_yaml(bomb, "x").data["b"]) == 10
    with pytest.raises(ScenarioError, match="its aliases expand the document past 500 values"):
        parse_yaml(bomb + "c: [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n", "x")


def test_a_merge_key_is_named_as_unsupported() -> None:
    with pytest.raises(ScenarioError) as raised:
        parse_yaml("base: &b {k: 1}\nmore: {<<: *b, j: 2}\n", "x")
    (problem,) = raised.value.problems
    assert str(problem) == (
        "x:2:8: more: merge keys (<<) are not supported (scenarios hold plain data only); write the keys out"
    )
