"""Putting a complete folder in place of another: results, redrawn figures, a tuning's output.

Invariant: `final` is never a partly written folder. The old folder is moved aside (renamed, so
nothing of it is lost), the new one renamed into its place, and only then is the old one removed;
if that rename fails, the old one is put back.
"""

from __future__ import annotations

import os
import shutil
from contextlib import suppress
from pathlib import Path


def replace_folder(temporary: Path, final: Path) -> None:
    """Put the complete folder `temporary` in place of `final` (which may not exist yet).

    Raises:
        NotADirectoryError: `final` is something other than a folder (left as it is).
    """
    if final.exists() and not final.is_dir():
        raise NotADirectoryError(
            f"{final}: is not a folder, where results go; move it or choose another --out"
        )
    old = final.with_name(f".{final.name}.old-{os.getpid()}")
    if final.exists():
        os.rename(final, old)
    try:
        os.rename(temporary, final)
    except BaseException:
        if old.exists() and not final.exists():
            os.rename(old, final)
        raise
    with suppress(FileNotFoundError):
        shutil.rmtree(old)
