"""A file inside a store's folder read without following a link: what the folder readers
(`stores` for strands' session folders, `opencode_files` for OpenCode's storage) share, each
telling the reason in its own words.

Invariant: nothing outside the folder is read through a link, and a name on a pipe or a device
is never waited on.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Literal

Why = Literal["link", "irregular", "unreadable"]


class Unread(Exception):
    """Why a file was not read: a symbolic link, no regular file, or the system's reason."""

    def __init__(self, why: Why, detail: str = "") -> None:
        super().__init__(why, detail)
        self.why, self.detail = why, detail

    def told(self, link: str, irregular: str) -> str:
        """The reason in a reader's words: its own for a link and for no regular file."""
        if self.why == "unreadable":
            return f"cannot read the file: {self.detail}"
        return link if self.why == "link" else irregular


def read_unfollowed(path: Path) -> bytes:
    """The bytes of the file at `path`, opened without following a link nor waiting on a pipe.

    Raises:
        Unread: `path` is a link, is no regular file, or cannot be opened or read (`detail` the
            system's reason).
    """
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        handle = os.open(path, flags)
    except OSError as error:
        raise Unread("link" if path.is_symlink() else "unreadable", error.strerror or "") from None
    if not stat.S_ISREG(os.fstat(handle).st_mode):  # before a file object, which refuses a folder
        os.close(handle)
        raise Unread("irregular")
    with os.fdopen(handle, "rb") as stream:
        try:
            return stream.read()
        except OSError as error:
            raise Unread("unreadable", error.strerror or "") from None
