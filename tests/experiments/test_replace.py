"""`replace_folder`: the final folder is always the old one or the complete new one."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxlab.experiments.replace import replace_folder


def _folder(path: Path, text: str) -> Path:
    path.mkdir()
    (path / "file.txt").write_text(text, encoding="utf-8")
    return path


def test_the_new_folder_takes_the_old_ones_place_and_nothing_is_left_beside_it(tmp_path: Path) -> None:
    final = _folder(tmp_path / "results", "old")
    replace_folder(_folder(tmp_path / ".results.tmp", "new"), final)
    assert (final / "file.txt").read_text(encoding="utf-8") == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results"]


def test_a_folder_that_did_not_exist_is_put_in_place(tmp_path: Path) -> None:
    replace_folder(_folder(tmp_path / ".results.tmp", "new"), tmp_path / "results")
    assert (tmp_path / "results" / "file.txt").read_text(encoding="utf-8") == "new"


def test_when_the_new_folder_cannot_be_moved_the_old_one_is_put_back(tmp_path: Path) -> None:
    final = _folder(tmp_path / "results", "old")
    with pytest.raises(FileNotFoundError):
        replace_folder(tmp_path / "missing", final)
    assert (final / "file.txt").read_text(encoding="utf-8") == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results"]


def test_a_file_in_the_folders_place_is_refused_and_left_as_it_is(tmp_path: Path) -> None:
    (tmp_path / "results").write_text("mine", encoding="utf-8")
    with pytest.raises(NotADirectoryError, match="is a file where results go"):
        replace_folder(_folder(tmp_path / ".results.tmp", "new"), tmp_path / "results")
    assert (tmp_path / "results").read_text(encoding="utf-8") == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".results.tmp", "results"]


def test_a_link_in_the_folders_place_is_refused_and_left_as_it_is(tmp_path: Path) -> None:
    """A link would be replaced rather than followed (and its removal failed half-way)."""
    target = _folder(tmp_path / "elsewhere", "mine")
    (tmp_path / "results").symlink_to(target, target_is_directory=True)
    with pytest.raises(NotADirectoryError, match="is a symbolic link where results go"):
        replace_folder(_folder(tmp_path / ".results.tmp", "new"), tmp_path / "results")
    assert (tmp_path / "results").is_symlink() and (target / "file.txt").read_text(encoding="utf-8") == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".results.tmp", "elsewhere", "results"]


def test_an_old_folder_that_cannot_be_removed_is_left_beside_the_new_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The new folder was in place, yet the command failed (exit 1, no index written)."""
    import shutil

    def refused(path: object, *args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied", str(path))

    final = _folder(tmp_path / "results", "old")
    monkeypatch.setattr(shutil, "rmtree", refused)
    replace_folder(_folder(tmp_path / ".results.tmp", "new"), final)
    assert (final / "file.txt").read_text(encoding="utf-8") == "new"
    (old,) = [p for p in tmp_path.iterdir() if p.name != "results"]
    assert old.name.startswith(".results.old-") and (old / "file.txt").read_text(encoding="utf-8") == "old"


def test_a_folder_left_aside_by_an_earlier_process_of_the_same_pid_is_not_in_the_way(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a container the pid comes back run after run: the rename onto the leftover failed."""
    import os

    final = _folder(tmp_path / "results", "old")
    _folder(tmp_path / f".results.old-{os.getpid()}", "left by an earlier process")
    replace_folder(_folder(tmp_path / ".results.tmp", "new"), final)
    assert (final / "file.txt").read_text(encoding="utf-8") == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == [f".results.old-{os.getpid()}", "results"]
