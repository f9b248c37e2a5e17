"""Sweep paths: what a dotted path names in a scenario, and the grid of values over them.

A sweep maps dotted paths to lists of values: `model.context_size: [4000, 8000]`. A path walks the
scenario's fields; `strategies.<name>` picks the strategy of that name; a number picks a list
item (`workload.script.turns.0.user.bytes`); under a mapping of free keys any key goes, and
under `workload.generator.params` the generator's own parameters are the fields.

Invariants:
- `resolve(key, doc, root)` returns the document path (`Loc`) the key names, or raises
  `SweepPathError` saying which segment names nothing, what is there instead, and a
  "did you mean". A path that changes what a strategy is (`name`, `preset`) or what the sweep
  is (`sweep`, `name`, `description`) is refused.
- `grid(axes)` is the cartesian product in a stable order: axes in file order, the last axis
  varying fastest; the same sweep always gives the same points in the same order.
- `set_at(doc, loc, value)` returns a new document; the input is never changed. Missing
  mappings on the way are created, so a default section can be swept without being written.
"""

from __future__ import annotations

import copy
import itertools
import json
import types
import typing
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from ctxlab.problems import Loc, did_you_mean, name_list
from ctxlab.workloads.generators import GENERATORS, GeneratorSpec

FIXED_PATHS = {"name", "description", "sweep", "record_requests", "tune"}
"""Top-level fields that describe the scenario itself and cannot be swept."""

FIXED_ENTRY_FIELDS = {"name", "preset"}
"""Fields that make a strategy what it is; sweep another field or add a strategy instead."""


class SweepPathError(ValueError):
    """A sweep path that names nothing (or something that cannot be swept)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Axis:
    """One swept path: its key as written, the document path it names, and its values."""

    key: str
    loc: Loc
    values: tuple[Any, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Point:
    """One grid point: its 0-based index in grid order and the value index on each axis."""

    index: int
    picks: tuple[int, ...]


DELEGATE_ENTRY: Loc = ("delegate", "strategy")
"""The one strategy entry outside `strategies`: its fields are its preset's, like theirs."""


def strategy_name(entry: object) -> object:
    """The name a strategy entry goes by: its `name`, else its preset."""
    if not isinstance(entry, Mapping):
        return None
    return entry.get("name") or entry.get("preset")


def _unwrap(annotation: Any) -> Any:
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    return annotation


def _members(annotation: Any) -> list[Any]:
    """A union's members other than None, nested unions flattened (`Annotated[A | B, ...] | None`
    is A and B)."""
    origin = typing.get_origin(annotation)
    if origin is typing.Union or origin is types.UnionType:
        return [m for a in typing.get_args(annotation) if a is not type(None) for m in _members(_unwrap(a))]
    return [annotation]


def _is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _child(value: Any, step: str | int) -> Any:
    if isinstance(step, int):
        return value[step] if isinstance(value, list) and -len(value) <= step < len(value) else None
    return value.get(step) if isinstance(value, Mapping) else None


def _model_step(model: type[BaseModel], segment: str, value: Any) -> Any:
    if segment not in model.model_fields:
        raise SweepPathError(
            f"{segment!r} is not a field here{did_you_mean(segment, model.model_fields)}; "
            f"fields: {', '.join(model.model_fields)}"
        )
    if model is GeneratorSpec and segment == "params":
        name = value.get("name") if isinstance(value, Mapping) else None
        if isinstance(name, str) and name in GENERATORS:
            return GENERATORS[name].params
    return model.model_fields[segment].annotation


def _step(annotation: Any, segment: str, value: Any) -> tuple[Any, str | int]:
    """The annotation under `segment`, and the document key it is stored at."""
    annotation = _unwrap(annotation)
    members = _members(annotation)
    if len(members) > 1:
        return _union_step(members, segment, value)
    annotation = members[0]
    origin = typing.get_origin(annotation)
    if annotation is Any:
        return Any, int(segment) if isinstance(value, list) and segment.isdigit() else segment
    if _is_model(annotation):
        return _model_step(annotation, segment, value), segment
    if origin in (list, tuple, Sequence):
        return _list_step(annotation, segment, value)
    if origin in (dict, Mapping):
        return typing.get_args(annotation)[1], segment
    raise SweepPathError(f"this holds a single value ({_single(annotation)}), so it has no {segment!r}")


def _single(annotation: Any) -> str:
    """What a single value's annotation admits, as a scenario writes it (no Python type names)."""
    if typing.get_origin(annotation) is typing.Literal:
        return "one of " + ", ".join(repr(choice) for choice in typing.get_args(annotation))
    return _SINGLE.get(annotation, "a plain value")


_SINGLE: dict[Any, str] = {int: "a whole number", float: "a number", str: "text", bool: "true or false"}


def _list_step(annotation: Any, segment: str, value: Any) -> tuple[Any, int]:
    if not segment.isdigit():
        raise SweepPathError(f"this is a list; pick an item by its 0-based number, not {segment!r}")
    index = int(segment)
    if not isinstance(value, list) or index >= len(value):
        size = len(value) if isinstance(value, list) else 0
        raise SweepPathError(f"item {index} does not exist (the list has {size})")
    return typing.get_args(annotation)[0], index


def _union_step(members: list[Any], segment: str, value: Any) -> tuple[Any, str | int]:
    models = [m for m in members if _is_model(m)]
    fields = list(dict.fromkeys(f for m in models for f in m.model_fields))
    first: SweepPathError | None = None
    for member in members:
        try:
            return _step(member, segment, value)
        except SweepPathError as error:
            first = first or error
    if models:
        raise SweepPathError(
            f"{segment!r} is not a field here{did_you_mean(segment, fields)}; fields: {', '.join(fields)}"
        )
    assert first is not None
    raise first


def _strategy_step(doc: Mapping[str, Any], segment: str, entry_model: Any) -> tuple[int, Any, Any]:
    entries = doc.get("strategies")
    entries = entries if isinstance(entries, list) else []
    names = [str(strategy_name(e)) for e in entries]
    if segment not in names:
        raise SweepPathError(
            f"no strategy is named {segment!r}{did_you_mean(segment, names)}; strategies are addressed by "
            f"name ({name_list(names) or 'none defined'})"
        )
    index = names.index(segment)
    return index, entry_model(entries[index]), entries[index]


def resolve(key: str, doc: Mapping[str, Any], root: type[BaseModel], entry_model: Any) -> Loc:
    """The document path `key` names in a scenario shaped like `root`.

    `entry_model(entry)` is the model of a raw strategy entry (by its preset).

    Raises:
        SweepPathError: a segment names nothing, or the path may not be swept.
    """
    segments = key.split(".")
    if not all(segments):
        raise SweepPathError(
            "a sweep path is dotted field names, e.g. model.context_size; it has an empty part"
        )
    loc: list[str | int] = []
    annotation: Any = root
    value: Any = doc
    for position, segment in enumerate(segments):
        try:
            if loc == ["strategies"]:
                index, annotation, value = _strategy_step(doc, segment, entry_model)
                loc.append(index)
                continue
            annotation, step = _step(annotation, segment, value)
        except SweepPathError as error:
            at = ".".join(segments[:position]) or "the scenario"
            raise SweepPathError(f"under {at}: {error}") from None
        loc.append(step)
        value = _child(value, step)
        if tuple(loc) == DELEGATE_ENTRY:
            annotation = entry_model(value)
    _check_sweepable(tuple(loc), key)
    return tuple(loc)


def _check_sweepable(loc: Loc, key: str) -> None:
    if loc[0] in FIXED_PATHS:
        raise SweepPathError(f"{loc[0]!r} describes the scenario itself and cannot be swept")
    if loc[0] == "strategies" and len(loc) < 3:
        raise SweepPathError("sweep a setting of a strategy (strategies.<name>.<field>), or add strategies")
    if loc[0] == "strategies" and loc[2] in FIXED_ENTRY_FIELDS:
        raise SweepPathError(f"a strategy's {loc[2]!r} cannot be swept; add another strategy instead")


def set_at(doc: Mapping[str, Any], loc: Loc, value: Any) -> dict[str, Any]:
    """A copy of `doc` with `value` at `loc` (mappings on the way created when missing).

    >>> set_at({"a": {"b": 1}}, ("a", "c", "d"), 2)
    {'a': {'b': 1, 'c': {'d': 2}}}
    """
    out = copy.deepcopy(dict(doc))
    node: Any = out
    for step in loc[:-1]:
        child = node[int(step)] if isinstance(node, list) else node.get(step)
        if not isinstance(child, dict | list):
            child = {}
            node[step] = child
        node = child
    if isinstance(node, list):
        node[int(loc[-1])] = copy.deepcopy(value)
    else:
        node[loc[-1]] = copy.deepcopy(value)
    return out


def overlapping(loc: Loc, named: Mapping[str, Loc]) -> str | None:
    """The first of the `named` paths that `loc` is, lies inside, or contains (None if none)."""
    for key, other in named.items():
        shorter = min(len(loc), len(other))
        if loc[:shorter] == other[:shorter]:
            return key
    return None


def overlap_message(what: str, other: str) -> str:
    return (
        f"overlaps the {what} {other!r}: one sets the other or a field inside it, so the values "
        "would overwrite each other; keep one of them"
    )


def grid(axes: Sequence[Axis]) -> Iterator[Point]:
    """Every combination of the axes' values, the last axis varying fastest.

    >>> axes = [Axis(key="a", loc=("a",), values=(1, 2)), Axis(key="b", loc=("b",), values=(3, 4))]
    >>> [p.picks for p in grid(axes)]
    [(0, 0), (0, 1), (1, 0), (1, 1)]
    """
    ranges = [range(len(axis.values)) for axis in axes]
    for index, picks in enumerate(itertools.product(*ranges)):
        yield Point(index=index, picks=tuple(picks))


def setting_at(validated: BaseModel, loc: Loc) -> str | None:
    """The validated setting at document path `loc` of a scenario, as canonical JSON (a
    generator's parameters as its own model reads them), or None when the path holds nothing
    validated. Two values that read as the same setting (`4000` and `"4000"`) give the same text.
    """
    node: Any = validated
    for key in loc:
        if isinstance(node, GeneratorSpec) and key == "params":
            node = GENERATORS[node.name].parse(node.params)
        elif isinstance(node, BaseModel) and isinstance(key, str) and key in type(node).model_fields:
            node = getattr(node, key)
        elif _holds(node, key):
            node = node[key]
        else:
            return None
    dumped = node.model_dump(mode="json") if isinstance(node, BaseModel) else node
    return json.dumps(dumped, sort_keys=True, default=str)


FILE_PATHS: tuple[Loc, ...] = (("workload", "trace", "path"), ("workload", "trace", "tools"))
"""Where a scenario names a file its runs read (a transcript, its tool schemas): a run id counts
the file by its sha256, not by its path."""


def run_setting_at(validated: BaseModel, loc: Loc, digests: Mapping[str, str]) -> str | None:
    """`setting_at`, with every file the setting names (`FILE_PATHS`) as its sha256 in `digests`
    (by path as written): two paths to the same bytes read as one setting, as run ids do."""
    setting = setting_at(validated, loc)
    named = [path[len(loc) :] for path in FILE_PATHS if path[: len(loc)] == loc]
    if setting is None or not named:
        return setting
    data = {"": json.loads(setting)}  # a holder, so a setting that is a path itself is replaced too
    for rest in named:
        holder: Any = data
        keys: tuple[Any, ...] = ("", *rest)
        for key in keys[:-1]:
            holder = holder.get(key) if isinstance(holder, dict) else None
        if isinstance(holder, dict) and isinstance(holder.get(keys[-1]), str):
            holder[keys[-1]] = {"sha256": digests.get(holder[keys[-1]], holder[keys[-1]])}
    return json.dumps(data[""], sort_keys=True, default=str)


def _holds(node: Any, key: str | int) -> bool:
    """Whether a list holds index `key`, or a mapping key `key`."""
    if isinstance(node, list | tuple):
        return isinstance(key, int) and -len(node) <= key < len(node)
    return isinstance(node, Mapping) and key in node


def grid_size(axes: Sequence[Axis]) -> int:
    """How many points the grid has (1 without axes)."""
    size = 1
    for axis in axes:
        size *= len(axis.values)
    return size


def fields_at(loc: Loc, doc: Mapping[str, Any], root: type[BaseModel], entry_model: Any) -> list[str] | None:
    """The field names allowed at document path `loc`, or None when they are not known there."""
    annotation: Any = root
    value: Any = doc
    for position, step in enumerate(loc):
        if loc[:position] == ("strategies",) and isinstance(step, int):
            value = _child(value, step)
            annotation = entry_model(value)
            continue
        try:
            annotation, _ = _step(annotation, str(step), value)
        except SweepPathError:
            return None
        value = _child(value, step)
        if loc[: position + 1] == DELEGATE_ENTRY:
            annotation = entry_model(value)
    models = _chosen([m for m in _members(_unwrap(annotation)) if _is_model(m)], value)
    if not models:
        return None
    return list(dict.fromkeys(f for m in models for f in m.model_fields))


def _chosen(models: list[type[BaseModel]], value: Any) -> list[type[BaseModel]]:
    """The members of a union of models that `value` selects by their tag fields (a `Literal`
    such as a summarizer's `kind`, given or defaulted); all of them when it selects none."""
    if len(models) < 2 or not isinstance(value, Mapping):
        return models
    chosen = [m for m in models if all(_tag_fits(f, name, value) for name, f in m.model_fields.items())]
    return chosen or models


def _tag_fits(field: Any, name: str, value: Mapping[str, Any]) -> bool:
    annotation = _unwrap(field.annotation)
    if typing.get_origin(annotation) is not typing.Literal:
        return True
    if name in value:
        return value[name] in typing.get_args(annotation)
    return not field.is_required()


def description_at(loc: Loc, doc: Mapping[str, Any], root: type[BaseModel], entry_model: Any) -> str | None:
    """The description of the field at document path `loc` (of the list holding it, for a list's
    item), or None when it is not known."""
    while loc and isinstance(loc[-1], int):
        loc = loc[:-1]
    if not loc or fields_at(loc[:-1], doc, root, entry_model) is None:
        return None
    annotation: Any = root
    value: Any = doc
    for position, step in enumerate(loc[:-1]):
        if loc[:position] == ("strategies",) and isinstance(step, int):
            value = _child(value, step)
            annotation = entry_model(value)
            continue
        annotation, _ = _step(annotation, str(step), value)
        value = _child(value, step)
        if loc[: position + 1] == DELEGATE_ENTRY:
            annotation = entry_model(value)
    for model in _chosen([m for m in _members(_unwrap(annotation)) if _is_model(m)], value):
        field = model.model_fields.get(str(loc[-1]))
        if field is not None and field.description:
            return str(field.description)
    return None
