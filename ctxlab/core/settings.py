"""A parameter value a rule refuses, and which setting is at fault.

A preset's parameters are frozen dataclasses whose `__post_init__` refuses bad values. Where one
setting is at fault, the check raises `SettingError` with that setting's path inside the
dataclass (`("keep",)`); a scenario loader then reports the error at the setting's own line
instead of the strategy entry's. The path is relative to the dataclass that raised: a dataclass
nested in another one's field is prefixed with that field's name by whoever builds the outer one
(`SettingError.under`), so `("condenser", "max_size")` names `condenser.max_size`.

Invariants:
- A `SettingError` is a `ValueError` whose text is exactly the message given (nothing is added),
  so code that catches `ValueError` or shows its text is unchanged.
- An empty path names the dataclass itself: a rule relating two of its settings, where neither
  alone is at fault.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

SettingPath = tuple[str | int, ...]
"""Field names (and tuple indexes) from a parameter dataclass to the setting at fault."""


class SettingError(ValueError):
    """A setting's value breaks a rule; `path` names the setting inside the dataclass that raised.

    >>> error = SettingError(("max_size",), "max_size=0: use a value above 0")
    >>> str(error), error.under("condenser").path
    ('max_size=0: use a value above 0', ('condenser', 'max_size'))
    """

    def __init__(self, path: SettingPath, message: str) -> None:
        super().__init__(message)
        self.path = path

    def __reduce__(self) -> tuple[type[SettingError], tuple[SettingPath, str]]:
        return (type(self), (self.path, str(self)))

    def under(self, *prefix: str | int) -> SettingError:
        """The same error, its path seen from a dataclass holding this one at `prefix`."""
        return SettingError((*prefix, *self.path), str(self))


def at_setting(error: ValueError, *prefix: str | int) -> SettingError:
    """`error` as a `SettingError` at `prefix`: a `SettingError`'s own path goes under `prefix`,
    any other `ValueError` names `prefix` itself (its text kept).

    >>> at_setting(ValueError("a fraction is in (0, 1], got 2"), "keep").path
    ('keep',)
    """
    if isinstance(error, SettingError):
        return error.under(*prefix)
    return SettingError(prefix, str(error))


@contextmanager
def setting(*path: str | int) -> Iterator[None]:
    """A `ValueError` raised inside the block is the setting at `path`'s fault.

    >>> try:
    ...     with setting("trigger"):
    ...         raise ValueError("trigger thresholds are above 0, got -1")
    ... except SettingError as error:
    ...     print(error.path, error)
    ('trigger',) trigger thresholds are above 0, got -1
    """
    try:
        yield
    except ValueError as error:
        raise at_setting(error, *path) from error
