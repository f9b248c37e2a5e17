"""Attachment lines of a Claude Code session log: the text Claude Code sent for one (`rendered`,
written by newer versions) is replayed where a replay turn can hold it; the others are counted by
attachment kind. The lines are shaped as Claude Code 2.1.280 writes them."""

from __future__ import annotations

from typing import Any

from ctxlab.core.messages.blocks import TextBlock
from ctxlab.workloads.importers import import_lines
from ctxlab.workloads.trace import map_wire
from tests.workloads.importing import claude_line, claude_prompt, lines

REMINDER = "<system-reminder>\n<total_tokens>14989389 tokens left</total_tokens>\n</system-reminder>"


def _answer(uuid: str, parent: str, *blocks: dict[str, Any]) -> dict[str, Any]:
    message = {"id": f"msg_{uuid}", "role": "assistant", "content": list(blocks)}
    return claude_line("assistant", uuid, parent, message=message)


def _result(uuid: str, parent: str, call: str) -> dict[str, Any]:
    content = [{"type": "tool_result", "tool_use_id": call, "content": "3 files"}]
    return claude_line("user", uuid, parent, message={"role": "user", "content": content})


def _attached(uuid: str, parent: str, data: dict[str, Any], *rendered: object) -> dict[str, Any]:
    line = claude_line("attachment", uuid, parent, attachment=data)
    return {**line, "rendered": [{"content": c} for c in rendered]} if rendered else line


def _reminder(uuid: str, parent: str) -> dict[str, Any]:
    data = {"type": "total_tokens_reminder", "text": "<total_tokens>14989389 tokens left</total_tokens>"}
    return _attached(uuid, parent, data, REMINDER)


TEXT = {"type": "text", "text": "Done."}
CALL = {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}


def test_the_text_sent_after_a_prompt_joins_that_prompt() -> None:
    """Claude Code sends an attachment's text in the request it precedes; after a prompt that is
    the prompt's own request, and the replay's turn holds it as another part of its user message.
    It was skipped, so the replay sent less than the session did."""
    hook = {"type": "hook_additional_context", "content": ["branch: main"], "hookName": "UserPromptSubmit"}
    rendered = [{"type": "text", "text": "<system-reminder>\nbranch: main\n</system-reminder>"}]
    log = [
        claude_prompt("u1", None, "list the files"),
        _attached("h1", "u1", hook, rendered),
        _answer("a1", "h1", TEXT),
    ]
    imported = import_lines(lines(*log), "s.jsonl")
    assert [(m["role"], m["content"]) for m in imported.messages] == [
        ("user", "list the files"),
        ("user", "<system-reminder>\nbranch: main\n</system-reminder>"),
        ("assistant", "Done."),
    ]
    (turn,) = map_wire(imported.messages).script.turns
    assert [p.text for p in turn.user if isinstance(p, TextBlock)] == ["list the files", rendered[0]["text"]]


def test_the_text_sent_after_an_answer_opens_the_next_turn() -> None:
    """Between turns a reminder goes with the next prompt; after the last answer no request
    carried it, and it is counted, not replayed."""
    log = [
        claude_prompt("u1", None, "list the files"),
        _answer("a1", "u1", TEXT),
        _reminder("r1", "a1"),
        claude_prompt("u2", "r1", "and the tests?"),
        _answer("a2", "u2", TEXT),
        _reminder("r2", "a2"),
    ]
    imported = import_lines(lines(*log), "s.jsonl")
    assert [m["content"] for m in imported.messages] == [
        "list the files",
        "Done.",
        REMINDER,
        "and the tests?",
        "Done.",
    ]
    assert (
        "skipped 1 × attachment:total_tokens_reminder (after the last request: never sent) (not replayed)"
        in (imported.warnings)
    )


def test_a_message_typed_while_the_model_worked_starts_its_own_turn() -> None:
    """A `queued_command` delivered after an answer is the next request's only user text."""
    queued = {"type": "queued_command", "prompt": "also count them", "commandMode": "prompt"}
    sent = (
        "<system-reminder>\nThe user sent a new message while you were working:\n"
        "also count them\n</system-reminder>"
    )
    log = [claude_prompt("u1", None, "list"), _answer("a1", "u1", TEXT), _attached("q1", "a1", queued, sent)]
    log.append(_answer("a2", "q1", {"type": "text", "text": "3 files."}))
    imported = import_lines(lines(*log), "s.jsonl")
    assert [m["role"] for m in imported.messages] == ["user", "assistant", "user", "assistant"]
    assert len(map_wire(imported.messages).script.turns) == 2


def test_the_text_sent_within_a_reply_is_counted_not_replayed() -> None:
    """Within a reply Claude Code sends the text beside the tool results, where a replay turn has
    no place for user text (a user message there would end the reply early)."""
    log = [
        claude_prompt("u1", None, "list the files"),
        _answer("a1", "u1", CALL),
        _reminder("r1", "a1"),
        _result("x1", "r1", "t1"),
        _reminder("r2", "x1"),
        _answer("a2", "r2", TEXT),
    ]
    imported = import_lines(lines(*log), "s.jsonl")
    assert [m["role"] for m in imported.messages] == ["user", "assistant", "tool", "assistant"]
    within = "attachment:total_tokens_reminder (sent within a reply, beside tool results)"
    assert f"skipped 2 × {within} (not replayed)" in imported.warnings


def test_an_attachment_without_its_text_is_counted_by_kind_with_a_note() -> None:
    """Older versions keep only the attachment's data; the warning says what was not replayed."""
    hook = {"type": "hook_success", "hookName": "Stop", "content": "", "exitCode": 0}
    odd = _attached("o1", "a1", {"type": "file", "filename": "a.png"}, [{"type": "image", "source": {}}])
    log = [
        claude_prompt("u1", None, "hi"),
        _answer("a1", "u1", TEXT),
        _attached("h1", "a1", hook),
        odd,
        {**odd, "uuid": "o2"},
    ]
    log[-1]["rendered"] = "not a list"
    imported = import_lines(lines(*log), "s.jsonl")
    assert [m["role"] for m in imported.messages] == ["user", "assistant"]
    assert "skipped 1 × attachment:hook_success (no `rendered` text) (not replayed)" in imported.warnings
    assert (
        "skipped 2 × attachment:file (`rendered` not as Claude Code writes it) (not replayed)"
        in imported.warnings
    )
    assert any(w.startswith("attachment lines without `rendered`") for w in imported.warnings)


def test_an_attachment_on_a_branch_the_session_left_is_not_replayed() -> None:
    log = [
        claude_prompt("u1", None, "first"),
        _answer("a1", "u1", TEXT),
        claude_prompt("x", "a1", "abandoned"),
        _reminder("r1", "x"),
        _answer("a2", "r1", TEXT),
        claude_prompt("u2", "a1", "instead"),
        _answer("a3", "u2", TEXT),
    ]
    imported = import_lines(lines(*log), "s.jsonl")
    assert [m["content"] for m in imported.messages] == ["first", "Done.", "instead", "Done."]
