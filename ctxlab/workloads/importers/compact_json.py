"""Compact JSON text (no spaces) of a JSON value, spelt with a stack, not recursion, so a value
nested as deep as Python's `json` reads is written too: what `pydantic_json` and `js_json` share,
each with its own spelling of scalars and its own order of an object's members.

The value is JSON read by Python's `json`: dictionaries with string keys, lists (or tuples),
strings, numbers, booleans and None.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

Scalar = Callable[[object], str]
"""A writer's spelling of a scalar (a string, number, boolean or None), a key among them."""
Members = Callable[[Mapping[str, object]], Iterable[tuple[str, object]]]
"""A writer's order of an object's members."""


@dataclass(frozen=True, slots=True)
class _Written:
    """Text already spelt, on the encoder's stack among values still to spell."""

    text: str


def compact_json(value: object, scalar: Scalar, members: Members) -> str:
    """`value` as compact JSON text: each scalar (and each key, as text) spelt by `scalar`, each
    object's members in the order `members` gives them, an array's items in order."""
    out: list[str] = []
    stack: list[object] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, _Written):
            out.append(item.text)
        elif isinstance(item, Mapping):
            pairs = ((scalar(str(k)) + ":", v) for k, v in members(item))
            stack.extend(reversed(_pieces("{", "}", pairs)))
        elif isinstance(item, list | tuple):
            stack.extend(reversed(_pieces("[", "]", (("", v) for v in item))))
        else:
            out.append(scalar(item))
    return "".join(out)


def in_order(mapping: Mapping[str, object]) -> Iterable[tuple[str, object]]:
    """An object's members in the mapping's own order."""
    return mapping.items()


def _pieces(opening: str, closing: str, members: Iterable[tuple[str, object]]) -> list[object]:
    """A container's pieces in order: its opening, each member's prefix and value (commas
    between), its closing."""
    pieces: list[object] = [_Written(opening)]
    for index, (prefix, member) in enumerate(members):
        pieces += [_Written(("," if index else "") + prefix), member]
    return [*pieces, _Written(closing)]
