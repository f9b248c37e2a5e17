"""LlamaIndex chat histories: a persisted SimpleChatStore (each key a session, in file order) and
ChatMessage dumps read without the package, as its OpenAI integration sends them; the older
`content` form read only when the format is forced; media and legacy function calls counted; and
shapes LlamaIndex never writes refused at their line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxlab.workloads.importers import SessionError, import_file, import_lines, read_any
from ctxlab.workloads.trace import TraceError
from tests.workloads.importing import DATA, assert_paired, lines, run_cli

STORE = DATA / "llamaindex/chat_store.json"
LISTED = DATA / "llamaindex/memory_messages.json"
PIXEL = (
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/"
    "iZk9HQAAAABJRU5ErkJggg=="
)


def _call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def _result(call_id: str, text: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": text}


ALICE = [
    {"role": "user", "content": "What is the weather in Paris and Oslo?"},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            _call("call_w1", "get_weather", '{"city": "Paris"}'),
            _call("call_w2", "get_weather", '{"city": "Oslo"}'),
        ],
        "reasoning_content": "Two cities: ask for both at once.",
    },
    _result("call_w1", "sunny, 21 °C"),
    _result("call_w2", "rainy, 9 °C"),
    {"role": "assistant", "content": "Paris is sunny at 21 °C; Oslo is rainy at 9 °C."},
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "What is in this picture? Then read my notes."},
            {"type": "image_url", "image_url": {"url": PIXEL}},
        ],
    },
    {
        "role": "assistant",
        "content": "Let me read your notes.",
        "tool_calls": [_call("call_r1", "read_file", '{"path": "notes.txt"}')],
    },
    _result("call_r1", "no such file: notes.txt"),  # the tool raised: nothing marks it an error
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [_call("call_r2", "read_file", '{"path": "notes.md"}')],
    },
    _result("call_r2", "pack an umbrella"),
    {"role": "assistant", "content": "The picture is a single pixel; your notes say: pack an umbrella."},
]
BOB = [
    {"role": "user", "content": "What is the time in UTC?"},
    {"role": "assistant", "content": "", "tool_calls": [_call("call_t1", "get_time", '{"zone": "UTC"}')]},
    _result("call_t1", "12:00"),
    {"role": "assistant", "content": "It is 12:00 UTC."},
]


def _msg(role: str, *blocks: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"role": role, "additional_kwargs": extra, "blocks": list(blocks)}


def _text(text: str) -> dict[str, Any]:
    return {"block_type": "text", "text": text}


def _tool_call(call_id: str | None, kwargs: Any = None) -> dict[str, Any]:
    given = {"q": 1} if kwargs is None else kwargs
    return {"block_type": "tool_call", "tool_call_id": call_id, "tool_name": "look", "tool_kwargs": given}


def _answer(call_id: str, *blocks: dict[str, Any]) -> dict[str, Any]:
    return _msg("tool", *(blocks or (_text("seen"),)), tool_call_id=call_id)


ASK = _msg("user", _text("Look."))


def _imported(*entries: Any, fmt: str | None = None) -> tuple[str, list[dict[str, Any]], tuple[str, ...]]:
    got = import_lines(lines(*entries), "history.json", fmt)
    return got.format, list(got.messages), got.warnings


def _refusal(value: Any) -> str:
    with pytest.raises(TraceError) as caught:
        import_lines(json.dumps(value, indent=2).splitlines(), "history.json")
    return str(caught.value)


def test_the_store_sample_reads_each_key_as_a_session_in_file_order() -> None:
    alice, bob = import_file(STORE), import_file(STORE, session=1)
    assert alice.format == bob.format == "llamaindex"
    assert list(alice.messages) == ALICE
    assert list(bob.messages) == BOB
    assert (
        "chat key 'bob' is replayed: session 1 of the file's 2 (counted from 0 in file order)" in bob.warnings
    )
    assert_paired(alice.messages)


def test_the_listed_sample_is_the_same_conversation_without_streaming() -> None:
    """The non-streamed messages carry no empty text block and no call `index`: the same replay."""
    listed = import_file(LISTED)
    assert listed.format == "llamaindex"
    assert list(listed.messages) == ALICE
    assert listed.warnings == ()


def test_a_session_past_the_store_keys_is_refused_and_a_file_of_messages_holds_one() -> None:
    with pytest.raises(SessionError, match="session 2 is beyond the file's 2 chat keys"):
        import_file(STORE, session=2)
    with pytest.raises(SessionError, match="holds one conversation per file"):
        import_file(LISTED, session=1)


def test_stores_one_a_line_count_their_keys_as_sessions_across_the_file() -> None:
    first = {"store": {"a": [ASK], "b": [_msg("user", _text("B."))]}, "class_name": "SimpleChatStore"}
    second = {"store": {"c": [_msg("user", _text("C."))]}, "class_name": "SimpleChatStore"}
    got = import_lines(lines(first, second), "stores.jsonl", session=2)
    assert list(got.messages) == [{"role": "user", "content": "C."}]
    assert (
        "chat key 'c' is replayed: session 2 of the file's 3 (counted from 0 in file order)" in got.warnings
    )
    with pytest.raises(SessionError, match="session 3 is beyond the file's 3 chat keys"):
        import_lines(lines(first, second), "stores.jsonl", session=3)


def test_a_memory_buffer_dump_and_messages_one_a_line_are_read() -> None:
    reply = _msg("assistant", _text("Done."))
    buffer = {
        "chat_store": {"store": {"chat_history": [ASK, reply]}, "class_name": "SimpleChatStore"},
        "chat_store_key": "chat_history",
        "token_limit": 3000,
        "class_name": "ChatMemoryBuffer",
    }
    expected = [{"role": "user", "content": "Look."}, {"role": "assistant", "content": "Done."}]
    assert _imported(buffer)[:2] == ("llamaindex", expected)
    assert _imported(ASK, reply)[:2] == ("llamaindex", expected)


def test_the_older_content_form_is_read_only_when_the_format_is_forced() -> None:
    """Messages with a `content` string and calls in `additional_kwargs` look like OpenAI chat
    messages: detection leaves them to that format (which refuses their results, the calls being
    where it does not look), `--format llamaindex` reads them."""
    openai_call = {"id": "c1", "type": "function", "function": {"name": "look", "arguments": "{}"}}
    history = [
        {"role": "system", "content": "Be brief.", "additional_kwargs": {}},
        {"role": "user", "content": "Look.", "additional_kwargs": {}},
        {"role": "assistant", "content": None, "additional_kwargs": {"tool_calls": [openai_call]}},
        {"role": "tool", "content": "seen", "additional_kwargs": {"tool_call_id": "c1", "name": "look"}},
        {"role": "assistant", "content": "Seen.", "additional_kwargs": {}},
    ]
    with pytest.raises(TraceError, match="a tool message needs a 'tool_call_id'"):
        _imported(history)
    fmt, messages, _ = _imported(history, fmt="llamaindex")
    assert fmt == "llamaindex"
    assert messages == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Look."},
        {"role": "assistant", "content": "", "tool_calls": [openai_call]},
        {"role": "tool", "tool_call_id": "c1", "content": "seen"},
        {"role": "assistant", "content": "Seen."},
    ]


def test_tool_call_blocks_win_over_the_copies_in_additional_kwargs() -> None:
    copy = {"id": "other", "type": "function", "function": {"name": "x", "arguments": "{}"}}
    reply = _msg("assistant", _tool_call("c1", {"city": "Zürich"}), tool_calls=[copy])
    _, messages, _ = _imported([ASK, reply, _answer("c1")])
    assert messages[1]["tool_calls"] == [_call("c1", "look", '{"city": "Z\\u00fcrich"}')]


def test_media_and_legacy_function_calls_are_counted_not_replayed() -> None:
    audio = {"block_type": "audio", "audio": "AA==", "path": None, "url": None, "format": "wav"}
    by_path = {
        "block_type": "image",
        "image": None,
        "path": "/tmp/a.png",
        "url": None,
        "image_mimetype": None,
    }
    shot = {"block_type": "image", "image": None, "path": None, "url": "https://example.com/a.png"}
    history = [
        _msg("developer", _text("Be brief.")),
        _msg("user", _text("Hear "), _text("this."), audio, by_path),
        _msg("assistant", _text(""), function_call={"name": "look", "arguments": "{}"}),
        {"role": "function", "additional_kwargs": {"name": "look"}, "blocks": [_text("seen")]},
        _msg("model", {"block_type": "thinking", "content": None}, _tool_call("c1")),
        _answer("c1", _text("seen"), shot),
        _msg("chatbot", _text("Done.")),
    ]
    _, messages, warnings = _imported(history)
    assert messages == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hear this."},
        {"role": "assistant", "content": "", "tool_calls": [_call("c1", "look", '{"q": 1}')]},
        {"role": "tool", "tool_call_id": "c1", "content": "seen"},
        {"role": "assistant", "content": "Done."},
    ]
    assert warnings == (
        "skipped 1 × audio block in a user message (not replayed)",
        "skipped 1 × empty assistant message (not replayed)",
        "skipped 1 × function message (a legacy function result, no call id) (not replayed)",
        "skipped 1 × image block given by a local path (the file is not read) (not replayed)",
        "skipped 1 × legacy function_call (no call id) (not replayed)",
        "skipped 1 × tool message part 'image_url' (not replayed)",
    )


def test_a_call_never_answered_stays_unanswered_for_the_replay_to_tell() -> None:
    _, messages, _ = _imported([ASK, _msg("assistant", _tool_call("c1")), _msg("user", _text("Stop."))])
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]


def test_an_openai_chat_file_with_blocks_of_its_own_is_not_taken_for_llamaindex() -> None:
    chat = [
        {"role": "user", "content": [{"type": "text", "text": "Hi."}]},
        {"role": "assistant", "content": "Hi."},
    ]
    assert _imported(chat)[0] == "openai-chat"
    with pytest.raises(TraceError, match="the format is not recognised"):
        _imported({"store": {"k": [{"role": "user", "content": "Hi."}]}})


@pytest.mark.parametrize(
    ("value", "said"),
    [
        ([ASK, _answer("nope")], "a tool result for 'nope' has no call before it"),
        ([ASK, _msg("tool", _text("x"))], "names no call id ('additional_kwargs.tool_call_id'"),
        (
            [ASK, _msg("critic", _text("x"))],
            "message 1 is not a LlamaIndex chat message: its role is 'critic'",
        ),
        (
            [ASK, _msg("user", {"block_type": "html"})],
            "message 1 is not a LlamaIndex chat message: blocks[0]",
        ),
        ([ASK, {**ASK, "blocks": "Look."}], "its blocks are str, not a list"),
        ([_msg("user", _tool_call("c1"))], "message 0.blocks[0]: a tool_call block in a user message"),
        ([ASK, _msg("assistant", _tool_call(None))], "a tool_call block has no 'tool_call_id'"),
        ([ASK, _msg("assistant", _tool_call("c1", 5))], "'tool_kwargs' is not an object or text"),
        ([ASK, _msg("assistant", _text(5))], "a text block's 'text' is not text"),  # type: ignore[arg-type]
        ([_msg("user", {"block_type": "image", "image": "not base64!"})], "'image' is not base64 text"),
        ([_msg("user", {"block_type": "image"})], "an image block has no 'url', 'image' or 'path'"),
        (
            [
                ASK,
                _msg("assistant", tool_calls=[{"id": "t", "name": "look", "input": {}, "type": "tool_use"}]),
            ],
            "is not an OpenAI tool call",
        ),
        ([ASK, _msg("assistant", tool_calls={"id": "t"})], "'additional_kwargs.tool_calls' is not a list"),
        (
            {"store": {"a": "Look."}, "class_name": "SimpleChatStore"},
            "key 'a': the store holds str, not a list",
        ),
    ],
)
def test_shapes_llamaindex_never_writes_are_refused_at_their_line(value: Any, said: str) -> None:
    refusal = _refusal(value)
    assert said in refusal and "history.json:" in refusal


def test_a_refusal_inside_a_listed_document_names_the_message_line() -> None:
    text = json.dumps([ASK, ASK, _answer("nope")], indent=2).splitlines()
    line = 1 + text.index("  {", text.index("  {", text.index("  {") + 1) + 1)
    with pytest.raises(TraceError, match=rf"^history\.json:{line}: "):
        import_lines(text, "history.json")


def test_a_second_entry_that_is_no_store_is_refused() -> None:
    store = {"store": {"a": [ASK]}, "class_name": "SimpleChatStore"}
    with pytest.raises(TraceError, match=r"history\.json:2: not a LlamaIndex chat history"):
        import_lines(lines(store, ASK), "history.json")


def test_ctxlab_import_and_replay_read_a_store_key(tmp_path: Path) -> None:
    out = tmp_path / "bob.jsonl"
    code, said, err = run_cli("import", str(STORE), "--session", "1", "--out", str(out))
    assert code == 0, err
    assert "(llamaindex)" in said
    assert [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()] == BOB
    code, _, err = run_cli(
        "replay", str(STORE), "--session", "1", "--preset", "none", "--out", str(tmp_path / "r"), "--quiet"
    )
    assert code == 0, err
    manifest = json.loads(next((tmp_path / "r").glob("*/manifest.json")).read_text(encoding="utf-8"))
    assert manifest["resolved_scenario"]["workload"]["trace"]["session"] == 1
    assert read_any(out).script == read_any(STORE, session=1).script
