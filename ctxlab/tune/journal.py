"""The study's journal file: Optuna's journal log, one JSON object per line (the format of
Optuna's own file backend, so either reads the other's files), appended without syncing.

Optuna's file backend forces every append to the disk (`fsync`), about a thousand times for the
shipped tuning: a fraction of a millisecond each on some machines, milliseconds on many disks,
for a log whose only use is resuming a search. Here each append is one `write` of whole lines,
which the operating system keeps once it returns, whatever happens to the process (Ctrl-C, a
kill, a crash); only the machine itself stopping can lose the last lines, and then resuming
runs those trials again, to the same results.

Invariants:
- Logs are numbered from 0 in file order; `read_logs(n)` yields logs n, n + 1, ... as written.
- Only whole lines are logs: a last line without its newline (a write the machine cut short) is
  not read, and is removed before the next append, so it never joins the next log's line.
- Appends are serialised between processes by Optuna's lock file (its `JournalFileOpenLock`), as
  its storages require; reads take no lock (a log, once written, never changes).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from optuna.storages.journal import BaseJournalBackend, JournalFileOpenLock
from optuna.storages.journal._storage import JournalOperation  # the codes its logs may hold


class JournalError(ValueError):
    """A journal line that is not one of Optuna's logs (the file edited, or not a study's)."""

    def __init__(self, path: Path, line: int | None) -> None:
        where = f"{path}:{line}" if line is not None else str(path)
        super().__init__(
            f"{where}: is not a log of an Optuna study (the file was edited, or is not a study's "
            "journal); remove the file to start the search afresh"
        )


def is_journal(path: Path) -> bool:
    """Whether every whole line of the file at `path` is a log (`_log`), as a study's is."""
    try:
        data = path.read_bytes()
    except OSError:
        return False
    return all(_log(line) is not None for line in data.split(b"\n")[:-1])


def _log(line: bytes) -> dict[str, Any] | None:
    """A line's log: a JSON object naming one of the study's operations (Optuna fails on any
    other, with no word of the file), else None."""
    try:
        log = json.loads(line)
    except ValueError:  # not UTF-8 or not JSON
        return None
    if not isinstance(log, dict):
        return None
    code = log.get("op_code")
    return log if type(code) is int and code in _OPERATIONS else None


_OPERATIONS = frozenset(operation.value for operation in JournalOperation)
"""The operation codes of a study's logs (Optuna's `JournalOperation`)."""


class AppendedJournal(BaseJournalBackend):
    """Optuna's journal log kept in the file at `path` (made when new), appended unsynced."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._lock = JournalFileOpenLock(str(path))
        self._starts = [0]  # the byte offset of each log read so far, and of the next
        path.touch()

    def read_logs(self, log_number_from: int) -> Iterator[dict[str, Any]]:
        """The logs from number `log_number_from` on (Optuna's storage replays them)."""
        number = min(log_number_from, len(self._starts) - 1)
        with self._path.open("rb") as file:
            file.seek(self._starts[number])
            data = file.read()
        start = self._starts[number]
        lines = data.split(b"\n")[:-1]  # the last piece is empty, or a line cut short
        for line in lines:
            start += len(line) + 1
            if number + 1 == len(self._starts):
                self._starts.append(start)
            if number >= log_number_from:
                log = _log(line)
                if log is None:
                    raise JournalError(self._path, number + 1)
                yield log
            number += 1

    def append_logs(self, logs: list[dict[str, Any]]) -> None:
        """Add `logs` at the end of the file, in one write."""
        text = "".join(json.dumps(log, separators=(",", ":")) + "\n" for log in logs)
        self._lock.acquire()
        try:
            with self._path.open("rb+") as file:
                _drop_cut_line(file)
                file.seek(0, os.SEEK_END)
                file.write(text.encode("utf-8"))
        finally:
            self._lock.release()


def _drop_cut_line(file: BinaryIO) -> None:
    """Truncate a last line that has no newline (nothing when the file ends with one)."""
    end = position = file.seek(0, os.SEEK_END)
    keep = 0
    while position > 0:
        start = max(0, position - 4096)
        file.seek(start)
        newline = file.read(position - start).rfind(b"\n")
        if newline >= 0:
            keep = start + newline + 1
            break
        position = start
    if keep < end:
        file.truncate(keep)
