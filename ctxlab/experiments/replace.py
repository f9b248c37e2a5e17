"""Putting a complete folder in place of another: results, redrawn figures, a tuning's output.

Invariant: `final` is never a partly written folder. The old folder is moved aside (renamed, so
nothing of it is lost), the new one renamed into its place, and only then is the old one removed
(left as `.<name>.old-<pid>` when it cannot be); if that rename fails, the old one is put back.
"""

from __future__ import annotations

import os
import shutil
from contextlib import suppress
from pathlib import Path


def unreplaceable(final: Path, elsewhere: str = "or choose another --out") -> str | None:
    """Why `final` cannot be replaced by a folder (`replace_folder`), as a message naming it and
    ending with `elsewhere` (where else the folder could go); None when it can (a folder, or
    nothing yet)."""
    if final.is_symlink():  # a link is replaced, not followed: the folder it names would be lost to it
        return (
            f"{final}: is a symbolic link where results go; they replace it whole, so remove the link "
            f"{elsewhere}"
        ).rstrip()
    if final.exists() and not final.is_dir():
        return f"{final}: is a file where results go; move it {elsewhere}".rstrip()
    return None


def replace_folder(temporary: Path, final: Path) -> None:
    """Put the complete folder `temporary` in place of `final` (which may not exist yet).

    Raises:
        NotADirectoryError: `final` is something other than a folder, or a link (`unreplaceable`;
            left as it is).
    """
    refused = unreplaceable(final)
    if refused is not None:
        raise NotADirectoryError(refused)
    old = _aside(final)
    if final.exists():
        os.rename(final, old)
    try:
        os.rename(temporary, final)
    except BaseException:
        if old.exists() and not final.exists():
            os.rename(old, final)
        raise
    # the new folder is in place: an old one that cannot be removed (a file of it not ours to
    # delete) is left beside it, named as such, rather than failing what is complete
    with suppress(OSError):
        shutil.rmtree(old)


def _aside(final: Path) -> Path:
    """A free name beside `final` to move it to: `.<name>.old-<pid>`, numbered past one an
    earlier process of the same pid left (its removal failed)."""
    old = final.with_name(f".{final.name}.old-{os.getpid()}")
    number = 1
    while os.path.lexists(old):
        old, number = final.with_name(f".{final.name}.old-{os.getpid()}-{number}"), number + 1
    return old
