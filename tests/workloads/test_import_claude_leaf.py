"""Which conversation a Claude Code session log goes on with: the line a `last-prompt` names, a
rewind to the first prompt, a session rewound to nothing. The lines are shaped as Claude Code
2.1.2xx-2.1.3xx writes them (a rewind's `last-prompt` is `explicit` and `rewound`; the line a
new prompt continues after a reply is the reply's closing `system` line)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ctxlab.workloads.files import TraceError
from ctxlab.workloads.importers import import_lines
from tests.workloads.importing import CLAUDE_SESSION, claude_line, claude_prompt, lines, run_cli


def _reply(uuid: str, parent: str, text: str) -> dict[str, Any]:
    message = {"id": f"msg_{uuid}", "role": "assistant", "content": [{"type": "text", "text": text}]}
    return claude_line("assistant", uuid, parent, message=message)


def _closing(uuid: str, parent: str) -> dict[str, Any]:
    return claude_line("system", uuid, parent, subtype="turn_duration", durationMs=1200)


def _mark(leaf: str | None, **fields: Any) -> dict[str, Any]:
    return {
        "type": "last-prompt",
        "lastPrompt": "BANANA",
        "leafUuid": leaf,
        "sessionId": CLAUDE_SESSION,
        **fields,
    }


def _turn(n: int, parent: str | None, text: str) -> list[dict[str, Any]]:
    """A prompt, its answer and the reply's closing line: `u<n>`, `r<n>`, `s<n>`."""
    return [
        claude_prompt(f"u{n}", parent, text),
        _reply(f"r{n}", f"u{n}", f"ok {text}"),
        _closing(f"s{n}", f"r{n}"),
    ]


def _texts(log: list[dict[str, Any]]) -> list[str]:
    return [m["content"] for m in import_lines(lines(*log), "s.jsonl").messages]


def _notes(log: list[dict[str, Any]]) -> list[str]:
    return [w for w in import_lines(lines(*log), "s.jsonl").warnings if w.startswith("line ")]


REWOUND = [*_turn(1, None, "APPLE"), *_turn(2, "s1", "BANANA")]
"""Two turns; a rewind to the second prompt goes back to the first reply (`r1`)."""


def test_a_rewind_the_session_said_nothing_after_is_not_replayed() -> None:
    """`/rewind` then exit: the rewound turn is still the last line of the file, but the
    `last-prompt` the rewind wrote names the reply before it, and Claude Code resumes there;
    the rewound turn was replayed as if the session had gone on with it."""
    log = [*REWOUND, _mark("r1", explicit=True, rewound=True)]
    assert _texts(log) == ["APPLE", "ok APPLE"]
    assert _notes(log) == [
        "line 7: the session stands at line 2 (a last-prompt line names it), so the 3 lines "
        "continuing that one, from line 4, are not replayed"
    ]


def test_a_prompt_after_the_rewind_takes_the_pin_away() -> None:
    """A line written after an explicit `last-prompt` continues the session from it."""
    log = [*REWOUND, _mark("r1", explicit=True, rewound=True), *_turn(3, "s1", "CHERRY")]
    assert _texts(log) == ["APPLE", "ok APPLE", "CHERRY", "ok CHERRY"]


def test_a_last_prompt_the_last_line_continues_changes_nothing() -> None:
    """Claude Code rewrites `last-prompt` as it goes (naming the line it stands at): the lines
    after one that continue it, even through the result of one of parallel calls, are the
    conversation."""
    calls = {"id": "msg_c", "role": "assistant", "content": [_use("t1"), _use("t2")]}
    log = [
        *_turn(1, None, "APPLE"),
        _mark("s1"),
        claude_prompt("u2", "s1", "run both"),
        claude_line("assistant", "c1", "u2", message={**calls, "content": [_use("t1")]}),
        claude_line("assistant", "c2", "c1", message={**calls, "content": [_use("t2")]}),
        _result("x1", "c1", "t1"),
        _result("x2", "c2", "t2"),
        _mark("x1"),
        _reply("r2", "x2", "both ran"),
    ]
    imported = import_lines(lines(*log), "s.jsonl")
    assert [m["role"] for m in imported.messages][-4:] == ["assistant", "tool", "tool", "assistant"]
    assert not [w for w in imported.warnings if w.startswith("line ")]
    assert "skipped 2 × last-prompt (not replayed)" in imported.warnings


def _use(call: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": call, "name": "Bash", "input": {}}


def _result(uuid: str, parent: str, call: str) -> dict[str, Any]:
    content = [{"type": "tool_result", "tool_use_id": call, "content": "done"}]
    return claude_line("user", uuid, parent, message={"role": "user", "content": content})


def test_the_named_line_wins_over_a_later_line_that_does_not_continue_it() -> None:
    """As Claude Code resumes: a `last-prompt` naming a line the last line does not continue
    (the rewind after it wrote nothing, and the session ended before naming its new line)."""
    log = [*REWOUND, _mark("r2"), *_turn(3, "s1", "CHERRY")]
    assert _texts(log) == ["APPLE", "ok APPLE", "BANANA", "ok BANANA"]
    assert _notes(log) == [
        "line 4: the session branches (a prompt edited or rewound): this line continues line 3, "
        "and the 3 lines of the branch it left, from line 8, are not replayed"
    ]


def test_a_compaction_forgets_the_line_named_before_it() -> None:
    """Claude Code drops a `last-prompt` written before a compaction boundary."""
    boundary = claude_line("system", "b", None, subtype="compact_boundary", logicalParentUuid="s3")
    summary = claude_line(
        "user", "sum", "b", message={"role": "user", "content": "summary"}, isCompactSummary=True
    )
    log = [*REWOUND, _mark("r2"), *_turn(3, "s1", "CHERRY"), boundary, summary, *_turn(4, "sum", "DATE")]
    assert _texts(log) == ["APPLE", "ok APPLE", "CHERRY", "ok CHERRY", "summary", "DATE", "ok DATE"]


def test_a_rewind_to_the_first_prompt_starts_the_conversation_anew() -> None:
    """Rewound to its first prompt, a session's next prompt continues no line: a second root in
    the file, and the only conversation Claude Code (and the model) went on with."""
    log = [*REWOUND, *_turn(3, None, "CHERRY")]
    assert _texts(log) == ["CHERRY", "ok CHERRY"]
    assert _notes(log) == [
        "line 7: the session starts anew (rewound to its first prompt): this prompt continues no "
        "line, and the 6 lines of the conversation it left, from line 1, are not replayed"
    ]
    once = import_lines(iter(lines(*log)), "s.jsonl")
    assert len(once.messages) == 6
    assert [w for w in once.warnings if "anew" in w] == [
        "line 7: the session starts anew (rewound to its first prompt): this prompt continues no "
        "line, as the one of line 1 does; the conversation before it is replayed as written"
    ]


def test_a_session_rewound_to_nothing_is_a_located_error_until_it_goes_on() -> None:
    """A rewind to the first prompt writes a `last-prompt` naming no line: with nothing after it
    the session has no conversation, which is said at that line rather than replayed."""
    cleared = _mark(None, explicit=True, rewound=True)
    with pytest.raises(TraceError, match=r"s\.jsonl:7: the session was rewound to before its first prompt"):
        import_lines(
            lines(*REWOUND, cleared, {"type": "last-prompt", "sessionId": CLAUDE_SESSION}), "s.jsonl"
        )
    assert _texts([*REWOUND, cleared, *_turn(3, None, "CHERRY")]) == ["CHERRY", "ok CHERRY"]


def test_prompts_that_name_no_parent_at_all_are_no_new_start() -> None:
    """Only `parentUuid: null` says a prompt continues no line; lines without the key (as other
    tools write them) are replayed as before."""
    log = [{k: v for k, v in line.items() if k != "parentUuid"} for line in REWOUND]
    assert _texts(log) == ["APPLE", "ok APPLE", "BANANA", "ok BANANA"]


def test_a_line_of_an_odd_shape_is_a_located_error_on_the_first_read_too(tmp_path: Path) -> None:
    """The first read, which finds the line the session stands at, met a line whose `type` is a
    list with a TypeError traceback; it is the located error the reading itself gives."""
    odd = {**_reply("r2", "s1", "x"), "type": ["assistant"]}
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(lines(*_turn(1, None, "APPLE"), odd)) + "\n")
    code, _, err = run_cli("import", str(path), "--out", str(tmp_path / "out.jsonl"), "--quiet")
    assert code == 2 and not (tmp_path / "out.jsonl").exists()
    assert f"{path}:4: an entry is not shaped as claude-code writes it: a value is a list where" in err
