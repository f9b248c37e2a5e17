"""An immutable set that grows by one item at a time without copying itself.

A run's state keeps the set of files it has read (`EpisodeState.read_cache`), a new immutable set
at every read. `frozenset | {item}` copies the set each time, so a run of thousands of reads of
different files (a coding agent's log) costs the square of its reads.

Invariants:
- A `GrowingSet` is a set (`collections.abc.Set`): equal to, and hashed as, the frozenset of its
  items; its items never change, whatever is grown from it.
- Versions grown one from another share one insertion-ordered dictionary of item -> place; a
  version holds the first `len` places. Growing the newest version adds a place to that
  dictionary, O(1); growing an older one (a branch) or the empty set starts a dictionary of its
  own, a copy of its items.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Iterable, Iterator, Set
from typing import Any, TypeVar

T = TypeVar("T", bound=Hashable)


class GrowingSet(Set[T]):
    """An immutable set whose `with_item` shares the set it grew from (see the module invariants).

    >>> read = GrowingSet[str]().with_item("a.py").with_item("b.py")
    >>> "a.py" in read, len(read), read == frozenset({"a.py", "b.py"})
    (True, 2, True)
    """

    __slots__ = ("_places", "_size")

    def __init__(self, items: Iterable[T] = ()) -> None:
        places: dict[T, int] = {}
        for item in items:
            places.setdefault(item, len(places))
        self._places, self._size = places, len(places)

    def __contains__(self, item: object) -> bool:
        at = self._places.get(item)  # type: ignore[arg-type]
        return at is not None and at < self._size

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[T]:
        return itertools.islice(self._places, self._size)

    def with_item(self, item: T) -> GrowingSet[T]:
        """This set and `item`: the set itself when it holds it already."""
        if item in self:
            return self
        places = self._places
        if not self._size or len(places) != self._size:  # empty, or a place past ours is taken
            places = dict(itertools.islice(places.items(), self._size))
        places[item] = self._size
        grown: GrowingSet[T] = object.__new__(GrowingSet)
        grown._places, grown._size = places, self._size + 1
        return grown

    def __and__(self, other: Set[Any]) -> GrowingSet[T]:
        return GrowingSet(item for item in other if item in self)

    def __hash__(self) -> int:
        return self._hash()

    def __reduce__(self) -> tuple[type[GrowingSet[T]], tuple[tuple[T, ...]]]:
        return GrowingSet, (tuple(self),)

    def __repr__(self) -> str:
        return f"GrowingSet({list(self)!r})"
