"""OpenCode's storage folder from before its database read as a store of conversations
(`importers.stores`, `importers.opencode_files`): each session read as its export is and as the
database holding it is; sessions chosen as the database's are; the order never the listing's;
every bad file, link and name refused at its file, nothing written."""

from __future__ import annotations

import json
import os
import random
import shutil
from pathlib import Path
from typing import Any

import pytest

from ctxlab.workloads.importers import SessionError, import_file
from ctxlab.workloads.importers.stores import OPENCODE, OPENCODE_FILES, STRANDS, kind_of, records
from ctxlab.workloads.trace import TraceError
from tests.data.importers.opencode.make_db import SECOND_SESSION
from tests.data.importers.opencode.make_storage import main
from tests.workloads.importing import DATA, imported, replayed_requests, run_cli
from tests.workloads.test_import_opencode_store import EXPORTS, reads_as_exports

STORAGE = DATA / "opencode" / "storage"
FIRST = "ses_4b2f9c1e7ffeq0Rk2mTzv1Yb8d"
MESSAGE = f"message/{SECOND_SESSION}/msg_c1000000003aBcDeFgHiJkLm.json"
PART = "part/msg_c1000000002aBcDeFgHiJkLm/prt_b0d30032a1c2QxR7.json"


def _copy(tmp_path: Path) -> Path:
    folder = tmp_path / "storage"
    shutil.copytree(STORAGE, folder)
    return folder


def _edit(path: Path, **fields: Any) -> None:
    value = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps({**value, **fields}), encoding="utf-8")


def test_each_session_reads_as_its_export_and_as_the_database_s() -> None:
    assert kind_of(STORAGE) == OPENCODE_FILES
    reads_as_exports(STORAGE)
    texts = [s.text for s in records(STORAGE, OPENCODE_FILES)]
    database = [s.text for s in records(DATA / "opencode" / "opencode.db", OPENCODE)]
    assert [json.loads(t or "") for t in texts] == [json.loads(t or "") for t in database]


def test_opencode_s_data_folder_is_read_through_its_storage_folder(tmp_path: Path) -> None:
    shutil.copytree(STORAGE, tmp_path / "opencode" / "storage")
    assert kind_of(tmp_path / "opencode") == OPENCODE_FILES
    places = [s.at for s in records(tmp_path / "opencode", OPENCODE_FILES)]
    assert places[0] == f"/storage/message/{FIRST}/msg_a1000000001aBcDeFgHiJkLm.json"
    assert kind_of(tmp_path) == STRANDS  # two levels down is no storage folder
    assert list(import_file(tmp_path / "opencode").messages) == list(import_file(EXPORTS[0]).messages)


def test_sessions_are_counted_by_time_created_then_id(tmp_path: Path) -> None:
    first, second = import_file(STORAGE, session=0), import_file(STORAGE, session=1)
    assert any(
        f"session '{FIRST}' ('Fix the failing cart total test') is replayed: conversation 0 of the store's 2"
        in w
        for w in first.warnings
    )
    assert any(f"session '{SECOND_SESSION}'" in w for w in second.warnings)
    with pytest.raises(SessionError, match="the file's 2 conversations"):
        import_file(STORAGE, session=2)
    folder = _copy(tmp_path)
    _edit(folder / "session" / "a3f9c2e1d0b4" / f"{SECOND_SESSION}.json", time={"created": 1})
    assert any(f"session '{SECOND_SESSION}'" in w for w in import_file(folder).warnings)


def test_messages_are_ordered_by_time_created_then_id(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    last = folder / "message" / FIRST / "msg_a1000000005aBcDeFgHiJkLm.json"
    _edit(last, time={"created": 1})
    first = next(json.loads(s.text or "")["info"]["id"] for s in records(folder, OPENCODE_FILES))
    assert first == "msg_a1000000005aBcDeFgHiJkLm"


def test_a_session_without_messages_is_no_conversation(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    empty = {"id": "ses_0", "title": "empty", "time": {"created": 0, "updated": 0}}
    (folder / "session" / "global").mkdir()
    (folder / "session" / "global" / "ses_0.json").write_text(json.dumps(empty), encoding="utf-8")
    (folder / "message" / "ses_0").mkdir()
    assert "Fix the failing" in " ".join(import_file(folder).warnings)


def test_a_session_of_a_project_without_its_file_is_read(tmp_path: Path) -> None:
    """OpenCode's migration leaves such a session out of the database (an orphan); the reader
    reads it, as OpenCode before the database listed a project's sessions by their folder."""
    folder = _copy(tmp_path)
    (folder / "project" / "a3f9c2e1d0b4.json").unlink()
    assert list(records(folder, OPENCODE_FILES)) == list(records(STORAGE, OPENCODE_FILES))
    shutil.rmtree(folder / "project")
    assert list(records(folder, OPENCODE_FILES)) == list(records(STORAGE, OPENCODE_FILES))


def test_the_order_is_not_the_order_files_were_made_in(tmp_path: Path) -> None:
    files = sorted(p.relative_to(STORAGE) for p in STORAGE.rglob("*.json"))
    expected = list(records(STORAGE, OPENCODE_FILES))
    for seed in range(3):
        folder = tmp_path / f"shuffled{seed}"
        random.Random(seed).shuffle(files)
        for name in files:
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(STORAGE / name, folder / name)
        assert list(records(folder, OPENCODE_FILES)) == expected


def test_the_generator_writes_the_same_storage(tmp_path: Path) -> None:
    main(str(tmp_path / "fresh"))
    fresh = sorted(p.relative_to(tmp_path / "fresh") for p in (tmp_path / "fresh").rglob("*"))
    assert fresh == sorted(p.relative_to(STORAGE) for p in STORAGE.rglob("*"))
    for name in fresh:
        if name.suffix:
            assert (tmp_path / "fresh" / name).read_bytes() == (STORAGE / name).read_bytes(), name


@pytest.mark.parametrize(
    ("change", "place", "told"),
    [
        (lambda f: (f / MESSAGE).write_text('{"role": ', encoding="utf-8"), MESSAGE, "it is not JSON"),
        (lambda f: (f / PART).write_text("[1]", encoding="utf-8"), PART, "it is no JSON object but list"),
        (lambda f: _edit(f / MESSAGE, time={}), MESSAGE, "its time.created is missing or no number"),
        (
            lambda f: _edit(f / PART, sessionID=FIRST),
            PART,
            f"it is a part of a message of session '{SECOND_SESSION}' but names session '{FIRST}'",
        ),
        (lambda f: _edit(f / MESSAGE, sessionID="../../etc"), MESSAGE, "its sessionID is '../../etc'"),
        (lambda f: _edit(f / PART, messageID="msg_x"), PART, "its messageID is 'msg_x' but its place"),
    ],
)
def test_a_bad_file_is_refused_at_its_file_when_its_session_is_read(
    tmp_path: Path, change: Any, place: str, told: str
) -> None:
    folder = _copy(tmp_path)
    change(folder)
    import_file(folder, session=0)  # only the session read is refused
    with pytest.raises(TraceError) as raised:
        import_file(folder, session=1)
    assert str(raised.value).startswith(f"{folder}/{place}: {told}")


def _link_out(folder: Path, outside: Path) -> str:
    shutil.move(folder / "message" / SECOND_SESSION, outside)
    (folder / "message" / SECOND_SESSION).symlink_to(outside, target_is_directory=True)
    return f"message/{SECOND_SESSION}"


def _link_file(folder: Path, outside: Path) -> str:
    outside.mkdir()
    shutil.move(folder / PART, outside / "part.json")
    (folder / PART).symlink_to(outside / "part.json")
    return PART


def _escaping_name(folder: Path, outside: Path) -> str:
    (folder / "message" / SECOND_SESSION / "...json").write_text("{}", encoding="utf-8")
    return f"message/{SECOND_SESSION}/...json"


def _bad_session(folder: Path, outside: Path) -> str:
    (folder / "session" / "a3f9c2e1d0b4" / f"{FIRST}.json").write_text("{", encoding="utf-8")
    return f"session/a3f9c2e1d0b4/{FIRST}.json"


def _twice(folder: Path, outside: Path) -> str:
    (folder / "session" / "global").mkdir()
    shutil.copyfile(
        folder / "session" / "a3f9c2e1d0b4" / f"{FIRST}.json", folder / "session" / "global" / f"{FIRST}.json"
    )
    return f"session/global/{FIRST}.json"


def _no_part_folder(folder: Path, outside: Path) -> str:
    shutil.rmtree(folder / "part")
    return "part"


def _folder_named_as_file(folder: Path, _outside: Path) -> str:
    (folder / MESSAGE).unlink()
    (folder / MESSAGE).mkdir()
    return MESSAGE


def _pipe_named_as_file(folder: Path, _outside: Path) -> str:
    (folder / PART).unlink()
    os.mkfifo(folder / PART)  # never waited on
    return PART


@pytest.mark.parametrize(
    ("change", "told"),
    [
        (_link_out, "is a symbolic link; links inside OpenCode's storage folder are not followed"),
        (_link_file, "is a symbolic link"),
        (_escaping_name, "is named by no OpenCode id"),
        (_bad_session, "it is not JSON"),
        (_twice, f"holds session '{FIRST}', as session/a3f9c2e1d0b4/{FIRST}.json does"),
        (_no_part_folder, "is missing: OpenCode's storage folder holds session/, message/ and part/"),
        (_folder_named_as_file, "is no regular file (a folder, a pipe or a device)"),
        (_pipe_named_as_file, "is no regular file (a folder, a pipe or a device)"),
    ],
)
def test_the_store_is_refused_at_the_file_that_cannot_be_read(tmp_path: Path, change: Any, told: str) -> None:
    folder = _copy(tmp_path)
    place = change(folder, tmp_path / "outside")
    with pytest.raises(TraceError) as raised:
        import_file(folder, session=0)
    assert str(raised.value).startswith(f"{folder}/{place}: {told}")


def test_a_link_is_never_followed_out(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    secret = tmp_path / "secret.json"
    secret.write_text('{"id": "prt_zzz", "type": "text", "text": "secret"}', encoding="utf-8")
    os.symlink(secret, folder / "part" / "msg_c1000000001aBcDeFgHiJkLm" / "prt_zzz.json")
    with pytest.raises(TraceError, match="is a symbolic link"):
        list(records(folder, OPENCODE_FILES))


def test_cli_import_and_replay_read_the_folder(tmp_path: Path) -> None:
    said, err, written = imported(STORAGE, tmp_path / "session.jsonl", "--session", "1")
    assert "(opencode)" in said and f"session '{SECOND_SESSION}'" in err
    assert written == list(import_file(EXPORTS[1]).messages)
    requests = replayed_requests(STORAGE, tmp_path / "results", "--session", "1")
    assert requests[-1]["messages"][0] == {"role": "user", "content": "What did we do so far?"}


def test_cli_writes_nothing_for_a_bad_folder(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    (folder / MESSAGE).write_text("{", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    code, _, err = run_cli("import", str(folder), "--out", str(out), "--session", "1")
    assert code != 0 and f"{MESSAGE}: it is not JSON" in err
    assert not out.exists()
