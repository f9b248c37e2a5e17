"""The study's journal file: Optuna's log format, read back from any log number, interchangeable
with Optuna's own file backend, never synced, and whole lines only."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.tune.journal import AppendedJournal
from ctxlab.tune.search import optuna_module

optuna = optuna_module()
from optuna.storages import JournalStorage  # noqa: E402
from optuna.storages.journal import JournalFileBackend  # noqa: E402

LOGS = st.lists(
    st.lists(
        st.builds(
            lambda fields, code: {**fields, "op_code": code},
            st.dictionaries(st.text(max_size=5), st.one_of(st.integers(), st.text(max_size=20)), max_size=3),
            st.integers(0, 10),
        ),
        min_size=1,
        max_size=4,
    ),
    max_size=5,
)
"""Batches of logs, each a JSON object naming one of Optuna's operations (its other fields text
with newlines, quotes and non-ASCII among them)."""


@given(batches=LOGS, start=st.integers(0, 25))
def test_logs_read_back_as_appended_from_any_number(tmp_path_factory: Any, batches: Any, start: int) -> None:
    path = tmp_path_factory.mktemp("journal") / "study.journal"
    journal = AppendedJournal(path)
    written = [log for batch in batches for log in batch]
    for batch in batches:
        journal.append_logs(batch)
        assert list(journal.read_logs(0))[-len(batch) :] == batch
    assert list(journal.read_logs(start)) == written[start:]
    assert list(AppendedJournal(path).read_logs(start)) == written[start:]  # a fresh reader too


def study_trials(storage: Any) -> list[tuple[Any, ...]]:
    study = optuna.load_study(study_name="s", storage=storage)
    return [(t.number, t.state, t.params, t.value, t.user_attrs) for t in study.get_trials()]


def fill(storage: Any) -> None:
    study = optuna.create_study(
        study_name="s", storage=storage, sampler=optuna.samplers.RandomSampler(seed=1)
    )
    for k in range(4):
        trial = study.ask()
        trial.suggest_int("x", 0, 9)
        trial.set_user_attr("note", f'trial {k}: 数据 "quoted"\n')
        study.tell(trial, float(k))


def test_a_journal_reads_optunas_own_files_and_optuna_reads_its_files(tmp_path: Path) -> None:
    theirs, ours = tmp_path / "theirs.journal", tmp_path / "ours.journal"
    fill(JournalStorage(JournalFileBackend(str(theirs))))
    fill(JournalStorage(AppendedJournal(ours)))
    expected = study_trials(JournalStorage(JournalFileBackend(str(theirs))))
    assert study_trials(JournalStorage(AppendedJournal(theirs))) == expected
    assert study_trials(JournalStorage(JournalFileBackend(str(ours)))) == expected


def test_appending_never_syncs_to_the_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: object) -> None:
        raise AssertionError("synced")

    monkeypatch.setattr(os, "fsync", refuse)
    monkeypatch.setattr(os, "fdatasync", refuse)
    fill(JournalStorage(AppendedJournal(tmp_path / "study.journal")))
    assert len(study_trials(JournalStorage(AppendedJournal(tmp_path / "study.journal")))) == 4


@pytest.mark.parametrize("cut", ['{"op_code":', "x" * 5000, ""])
def test_a_line_cut_short_is_not_read_and_gone_before_the_next_append(tmp_path: Path, cut: str) -> None:
    path = tmp_path / "study.journal"
    a, b, c = ({"op_code": 4, "study_id": n} for n in range(3))
    AppendedJournal(path).append_logs([a, b])
    with path.open("ab") as file:
        file.write(cut.encode())
    journal = AppendedJournal(path)
    assert list(journal.read_logs(0)) == [a, b]
    journal.append_logs([c])
    assert list(AppendedJournal(path).read_logs(0)) == [a, b, c]
    assert path.read_bytes().endswith(b'{"op_code":4,"study_id":2}\n')


def test_a_file_that_is_one_cut_line_loses_only_it(tmp_path: Path) -> None:
    path = tmp_path / "study.journal"
    path.write_bytes(b'{"op_code": 0, "worker')
    journal = AppendedJournal(path)
    assert list(journal.read_logs(0)) == []
    journal.append_logs([{"a": 1}])
    assert path.read_bytes() == b'{"a":1}\n'
