"""A YAML document read safely, with the file, line and column of every node.

Invariants:
- Only YAML's safe constructors run: a tag that would build an object (`!!python/object`, any
  custom tag) is refused, so nothing in a scenario can run code.
- Every value read keeps the position of its node, so any `Problem` found in the document can
  be located (`Located.locate`) and read `file:line:col: field.path: ...`; the wording of
  problems is `ctxlab.problems`'.
- Files that are not YAML text are refused before parsing (`ctxlab.scenarios.text`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from ctxlab.problems import (
    Clean,
    Describe,
    Keys,
    Loc,
    Position,
    Problem,
    ScenarioError,
    describe_errors,
    drop_union_tags,
)
from ctxlab.scenarios.text import hidden_break, read_text, refuse, unprintable

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True, slots=True)
class Located:
    """A YAML document as plain data, with the position of every node by its path; `lined`
    False for a document made in memory (by `ctxlab replay` or a notebook), which has no lines:
    its problems name `file` alone."""

    file: str
    data: Any
    positions: Mapping[Loc, tuple[int, int]]
    lined: bool = True

    def where(self, loc: Loc) -> tuple[int, int]:
        """The (line, column) of the deepest known node on `loc` (1-based); (0, 0) when the
        document has no lines."""
        if not self.lined:
            return (0, 0)
        for end in range(len(loc), -1, -1):
            if loc[:end] in self.positions:
                return self.positions[loc[:end]]
        return (1, 1)

    def locate(self, problem: Problem) -> Problem:
        """`problem`, positioned at its field in this document."""
        return replace(problem, at=Position(self.file, *self.where(problem.loc)))


FAST_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's safe loader where PyYAML was built with it: the same nodes and marks, much faster."""


def parse_yaml(text: str, file: str) -> Located:
    """Parse one YAML document with the safe loader, keeping node positions.

    A plain document (one, without anchors, aliases or tags beyond the scalar ones) is read
    straight from libyaml's events (`_read_events`), and its positions are read from them again
    only when a problem is located; anything else, and every error, goes through `compose_yaml`,
    which gives the same data and positions for a plain document.
    """
    refused = unprintable(text, file) or hidden_break(text, file)
    if refused is not None:
        raise refused
    data = _read_events(text) if FAST_LOADER is not yaml.SafeLoader else _NOT_PLAIN
    if data is _NOT_PLAIN:
        return compose_yaml(text, file)
    return Located(file=file, data=data, positions=_Positions(text))


def compose_yaml(text: str, file: str) -> Located:
    """`parse_yaml` by way of YAML's node graph: any document, every error located.

    The document is composed by libyaml when available; a document it rejects is composed again
    by the pure-Python loader, whose messages say more, so the error reads the same either way.
    """
    try:
        node = yaml.compose(text, Loader=FAST_LOADER)
    except yaml.MarkedYAMLError:
        node = _compose_slowly(text, file)
    if node is None:
        raise refuse(file, "is empty (only blank lines or comments); see scenarios/*.yaml")
    positions: dict[Loc, tuple[int, int]] = {}
    try:
        data = _build(node, (), positions, _Reading(file, yaml.constructor.SafeConstructor()))
    except yaml.MarkedYAMLError as bad:
        raise _yaml_error(bad, file) from bad
    return Located(file=file, data=data, positions=positions)


def _compose_slowly(text: str, file: str) -> yaml.Node | None:
    try:
        return yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as bad:
        raise _yaml_error(bad, file) from bad
    except RecursionError as deep:
        raise refuse(file, f"nests deeper than {MAX_DEPTH} levels; a scenario holds plain settings") from deep


def _yaml_error(bad: yaml.MarkedYAMLError, file: str) -> ScenarioError:
    mark = bad.problem_mark or bad.context_mark
    line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
    problem = str(bad.problem or bad.context)
    fix = next((hint for needle, hint in _YAML_FIXES if needle in problem), _YAML_FIX)
    return refuse(file, f"invalid YAML: {problem}; {fix}", line, column)


_YAML_FIXES = (
    ("'\\t'", "indent with spaces: YAML does not allow tabs there"),
    ("another document", "a scenario file holds one YAML document; remove the second '---' and what follows"),
    (
        "mapping values are not allowed",
        "quote a value that holds ': ', or start a nested mapping on its own line",
    ),
    ("expected ',' or", "add the missing comma, or close the bracket opened before"),
    ("stream end", "close the quote or bracket that is still open"),
    ("end of stream", "close the quote or bracket that is still open"),
    ("<block end>", "indent this line as the other keys of its mapping or items of its list"),
    ("undefined alias", "define the anchor (&name) before its alias (*name), or write the value out"),
    ("cannot start any token", "quote the value"),
)
"""How to fix what PyYAML reports, by a part of its message; `_YAML_FIX` for any other."""
_YAML_FIX = "check the quotes, brackets and indentation here"


def _node_error(node: yaml.Node, file: str, loc: Loc, message: str) -> ScenarioError:
    return refuse(file, message, node.start_mark.line + 1, node.start_mark.column + 1, loc)


MAX_DEPTH = 64
"""The deepest a scenario's values may nest (deeper is no setting, and would exhaust the stack)."""
MAX_VALUES = 2_000_000
"""The most values a document may hold once its aliases are expanded (a file at the size limit
holds far fewer; aliases of aliases can reach billions)."""


@dataclass(slots=True)
class _Reading:
    """One document being built: its file name, the safe constructor its scalars go through
    (one per document: making a loader per scalar was most of the build's time), and how many
    values it has built so far."""

    file: str
    constructor: yaml.constructor.SafeConstructor
    built: int = 0


def _build(node: yaml.Node, path: Loc, positions: dict[Loc, tuple[int, int]], reading: _Reading) -> Any:
    reading.built += 1
    if len(path) > MAX_DEPTH:
        message = f"nests deeper than {MAX_DEPTH} levels; a scenario holds plain settings"
        raise _node_error(node, reading.file, path, message)
    if reading.built > MAX_VALUES:
        message = f"its aliases expand the document past {MAX_VALUES:,} values; write the values out"
        raise _node_error(node, reading.file, (), message)
    positions[path] = (node.start_mark.line + 1, node.start_mark.column + 1)
    if isinstance(node, yaml.MappingNode):
        return _build_mapping(node, path, positions, reading)
    if isinstance(node, yaml.SequenceNode):
        _check_tag(node, path, reading.file, "tag:yaml.org,2002:seq")
        return [_build(item, (*path, i), positions, reading) for i, item in enumerate(node.value)]
    return _scalar(node, path, reading)


def _build_mapping(
    node: yaml.MappingNode, path: Loc, positions: dict[Loc, tuple[int, int]], reading: _Reading
) -> Any:
    file = reading.file
    _check_tag(node, path, file, "tag:yaml.org,2002:map")
    out: dict[Any, Any] = {}
    for key_node, value_node in node.value:
        key = _scalar(key_node, path, reading, key=True)
        if not isinstance(key, str):
            raise _node_error(key_node, file, path, _not_a_name(key, key_node.value, value_node))
        if key in out:
            raise _node_error(key_node, file, (*path, key), "appears twice in one mapping; keep one")
        out[key] = _build(value_node, (*path, key), positions, reading)
        positions[(*path, key)] = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
    return out


def _not_a_name(key: object, written: str, value: yaml.Node) -> str:
    """Why a mapping key YAML reads as a number, a yes/no value or null is refused: every key of
    a scenario is a name (a setting's, a sweep path, a tool argument's), which such a key would
    reach as something else (`yes:` as true, `1:` as an integer). A number with no value after
    it is most likely the rest of a number split at its thousands separator (`{size: 128,000}`)."""
    kind = "a yes/no value" if isinstance(key, bool) else "null" if key is None else "a number"
    quote = f"quote it ('{written}': ...)"
    if kind == "a number" and isinstance(value, yaml.ScalarNode) and value.value == "" and not value.style:
        quote = (
            "inside {...} a comma separates entries, so a number written with a thousands separator "
            f"(128,000) is cut there: write the number without one (128000), or {quote} if it is a key"
        )
    return f"the key {written!r} reads as {kind} in YAML, and keys are names; {quote}"


def _check_tag(node: yaml.Node, path: Loc, file: str, *allowed: str) -> None:
    if node.tag == _MERGE:
        message = "merge keys (<<) are not supported (scenarios hold plain data only); write the keys out"
        raise _node_error(node, file, path, message)
    if node.tag not in allowed:
        message = f"the YAML tag {node.tag!r} is not allowed (scenarios hold plain data only); remove the tag"
        raise _node_error(node, file, path, message)


_MERGE = "tag:yaml.org,2002:merge"


_SCALAR_TAGS = tuple(f"tag:yaml.org,2002:{t}" for t in ("str", "int", "float", "bool", "null", "timestamp"))
_STR, _TIMESTAMP = _SCALAR_TAGS[0], _SCALAR_TAGS[-1]
_CONSTRUCTORS = yaml.constructor.SafeConstructor.yaml_constructors
_UNREADABLE = (ValueError, KeyError, IndexError, AttributeError)
"""What the safe constructors raise for a value they cannot read as its tag (`!!int ""`
indexes an empty string; `!!bool maybe` is no key of theirs)."""


def _scalar(node: yaml.Node, path: Loc, reading: _Reading, *, key: bool = False) -> Any:
    """A scalar node's value; a `key` that is no name is refused by its mapping (`_not_a_name`)."""
    if not isinstance(node, yaml.ScalarNode):
        raise _node_error(
            node,
            reading.file,
            path,
            "a mapping key must be a plain value; write a name, not a list or mapping",
        )
    tag = node.tag
    if tag in (_STR, _TIMESTAMP):
        half = _surrogate(node)
        if half:
            message = (
                f"{half} is a surrogate (half of a UTF-16 pair), not a character, and YAML joins no "
                "pairs; write the character itself, or its \\U escape of 8 hex digits (\\U0001F600)"
            )
            raise _node_error(node, reading.file, path, message)
        return node.value  # a string as written; dates are kept as written too (the models parse them)
    _check_tag(node, path, reading.file, *_SCALAR_TAGS)
    # the safe constructor's own function for the tag, without `construct_object`'s bookkeeping
    try:
        value = _CONSTRUCTORS[tag](reading.constructor, node)
    except _UNREADABLE as bad:  # only an explicit tag can give a value its tag refuses
        kind = tag.rsplit(":", 1)[-1]
        message = f"{node.value!r} is not a YAML {kind}; write one, or remove the tag !!{kind}"
        raise _node_error(node, reading.file, path, message) from bad
    refusal = _out_of_range(value) or (None if key else _old_number(tag, node.value, value))
    if refusal:
        raise _node_error(node, reading.file, path, f"{node.value} {refusal}")
    return value


def _old_number(tag: str, written: str, value: Any) -> str | None:
    """Why a number written in a form only YAML 1.1 reads so is refused, or None: a leading zero
    makes it octal (`017000` is 7680) and colons make it base 60 (`2:13:20` is 8000), where a
    reader expects the digits written (as YAML 1.2, JSON and every editor read them)."""
    if tag not in (_INT, _FLOAT):
        return None
    if _OCTAL.match(written):
        return f"reads as the octal number {value} in YAML; write it without its leading zeros, or quote it"
    if ":" in written:
        return f"reads as the base-60 number {value} in YAML; write the number itself, or quote it"
    return None


_INT, _FLOAT = _SCALAR_TAGS[1], _SCALAR_TAGS[2]
_OCTAL = re.compile(r"[-+]?0[0-7_]+$")


def _surrogate(scalar: yaml.ScalarNode | yaml.ScalarEvent) -> str | None:
    """The escape of the first surrogate a double-quoted scalar holds (`"\\ud800"`: no character,
    and nothing a run writes as UTF-8 can hold it; YAML reads `"\\ud83d\\ude00"` as two of
    them), or None. Only a double-quoted scalar can escape one; the file's own text is UTF-8."""
    if scalar.style != '"' or scalar.value.isascii():
        return None
    found = _SURROGATE.search(scalar.value)
    return ascii(found.group())[1:-1] if found else None


_SURROGATE = re.compile("[\ud800-\udfff]")


def _out_of_range(value: Any) -> str | None:
    """Why a number cannot be a setting (results and hashes hold finite numbers and 64-bit
    integers), or None."""
    if isinstance(value, float) and not math.isfinite(value):
        return "is not a finite number; write a number"
    if isinstance(value, int) and not isinstance(value, bool) and not -INT64 <= value < INT64:
        return f"is out of range; results hold whole numbers from {-INT64:,} up to {INT64 - 1:,}"
    return None


INT64 = 2**63


class _Unusual(Exception):
    """What the event reading leaves to `compose_yaml`: an anchor, an alias, a collection tag,
    a key that is not a plain scalar or not text, a repeated key, a second document, or any YAML
    error."""


_NOTHING: Any = object()
_NOT_PLAIN: Any = object()  # what `_read_events` gives for a document it leaves to `compose_yaml`
_RESOLVER: Any = yaml.resolver.Resolver()


def _read_events(text: str, positions: dict[Loc, tuple[int, int]] | None = None) -> Any:
    """A plain document's data, read from libyaml's events without building nodes, with the
    position of every node put into `positions` when given; `_NOT_PLAIN` when `compose_yaml` must
    read it (see `_Unusual`, or a stream with no document).

    Invariant: for every document it reads, data and positions (in their insertion order) equal
    `compose_yaml`'s; a test compares the two. Whether positions are kept changes nothing else.
    """
    root = _Open((), mapping=False, root=True)
    stack = [root]
    seen: dict[tuple[Any, ...], Any] = {}
    try:
        events: Iterator[Any] = yaml.parse(text, Loader=FAST_LOADER)
        for event in events:
            kind = type(event)
            if kind is yaml.ScalarEvent:
                value = _plain_scalar(event, seen)
                parent = stack[-1]
                if parent.wants_key():
                    parent.take_key(value, event.start_mark)
                else:
                    if positions is not None:
                        positions[parent.child_path()] = _line_column(event.start_mark)
                    parent.add(value, positions)
            elif kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent:
                parent = stack[-1]
                unusual = event.anchor is not None or event.tag not in (None, "!") or parent.wants_key()
                if unusual or len(stack) > MAX_DEPTH:
                    raise _Unusual
                path: Loc = ()
                if positions is not None:
                    path = parent.child_path()
                    positions[path] = _line_column(event.start_mark)
                stack.append(_Open(path, mapping=kind is yaml.MappingStartEvent))
            elif kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
                done = stack.pop()
                stack[-1].add(done.value, positions)
            elif kind is yaml.AliasEvent or (kind is yaml.DocumentStartEvent and root.value):
                raise _Unusual
    except (yaml.YAMLError, _Unusual):
        return _NOT_PLAIN
    return root.value[0] if root.value else _NOT_PLAIN


def _line_column(mark: Any) -> tuple[int, int]:
    return (mark.line + 1, mark.column + 1)


class _Positions(Mapping[Loc, tuple[int, int]]):
    """The positions of a plain document's nodes, read from its events again when first asked
    for: a document that loads without a problem to locate never needs them."""

    def __init__(self, text: str) -> None:
        self._text: str | None = text
        self._table: dict[Loc, tuple[int, int]] = {}

    def _read(self) -> dict[Loc, tuple[int, int]]:
        if self._text is not None:
            _read_events(self._text, self._table)
            self._text = None
        return self._table

    def __getitem__(self, loc: Loc) -> tuple[int, int]:
        return self._read()[loc]

    def __contains__(self, loc: object) -> bool:
        return loc in self._read()

    def __iter__(self) -> Iterator[Loc]:
        return iter(self._read())

    def __len__(self) -> int:
        return len(self._read())


@dataclass(slots=True)
class _Open:
    """A mapping or sequence being read: its path (when positions are kept), its value so far,
    and a mapping's key read but not yet given its value (with the key's mark). The root holds
    the document's node as its one item, at the empty path."""

    path: Loc
    mapping: bool
    root: bool = False
    value: Any = None
    key: Any = _NOTHING
    key_mark: Any = None

    def __post_init__(self) -> None:
        self.value = {} if self.mapping else []

    def wants_key(self) -> bool:
        return self.mapping and self.key is _NOTHING

    def take_key(self, key: Any, mark: Any) -> None:
        if not isinstance(key, str) or key in self.value:
            raise _Unusual
        self.key, self.key_mark = key, mark

    def child_path(self) -> Loc:
        if self.mapping:
            return (*self.path, self.key)
        return () if self.root else (*self.path, len(self.value))

    def add(self, value: Any, positions: dict[Loc, tuple[int, int]] | None) -> None:
        """Give the value read: a mapping's to its key (positioned at the key), else appended."""
        if self.mapping:
            self.value[self.key] = value
            if positions is not None:
                positions[(*self.path, self.key)] = _line_column(self.key_mark)
            self.key = _NOTHING
        else:
            self.value.append(value)


def _plain_scalar(event: Any, seen: dict[tuple[Any, ...], Any]) -> Any:
    """A scalar event's value as `_scalar` reads its node (`_Unusual` for an anchor or a tag
    that is not a plain scalar's). Short scalars repeat (every key of a long list of turns):
    `seen` keeps what they read as, by tag, text and style (the values are immutable)."""
    if event.anchor is not None:
        raise _Unusual
    if len(event.value) > _REMEMBERED:
        return _scalar_value(event)
    key = (event.tag, event.value, event.implicit)
    if key not in seen:
        seen[key] = _scalar_value(event)
    return seen[key]


_REMEMBERED = 24
"""Scalars up to this many characters are remembered by `_plain_scalar`."""


def _scalar_value(event: Any) -> Any:
    tag = event.tag
    if tag is None or tag == "!":
        tag = _RESOLVER.resolve(yaml.ScalarNode, event.value, event.implicit)
    if tag in (_STR, _TIMESTAMP):
        if _surrogate(event):
            raise _Unusual
        return event.value
    if tag not in _SCALAR_TAGS:
        raise _Unusual
    node = yaml.ScalarNode(tag, event.value, event.start_mark, event.end_mark)
    try:
        value = _CONSTRUCTORS[tag](_CONSTRUCTOR, node)
    except _UNREADABLE as bad:
        raise _Unusual from bad
    if _out_of_range(value) or _old_number(tag, event.value, value):
        raise _Unusual
    return value


_CONSTRUCTOR = yaml.constructor.SafeConstructor()
"""The safe constructor whose functions read plain scalars (they keep no state for scalars)."""


def validate(
    located: Located,
    model: type[M],
    context: Mapping[str, Any] | None = None,
    *,
    clean: Clean = drop_union_tags,
    keys: Keys | None = None,
    describe: Describe | None = None,
) -> M:
    """The document as `model`, or a ScenarioError listing every problem, located."""
    try:
        return model.model_validate(located.data, context=dict(context or {}))
    except ValidationError as bad:
        found = describe_errors(bad, model, clean=clean, keys=keys, document=located.data, describe=describe)
        raise ScenarioError([located.locate(p) for p in found]) from bad


def load(path: Path, model: type[M], context: Mapping[str, Any] | None = None) -> M:
    """Read, parse and validate one file."""
    return validate(parse_yaml(read_text(path), str(path)), model, context)
