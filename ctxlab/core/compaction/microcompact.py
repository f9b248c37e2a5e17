"""Microcompact: superseded duplicate tool results become a short placeholder, in place.

Source: nonoka `microcompact_superseded_tool_results` (github.com/fyerfyer/Nonoka-agent,
`nonoka/core/memory.py` @ 73b4ea7), which runs before every budget check. Repeating one logical
tool call (reading the same file, the same grep, the same shell command) makes every result but
the newest stale; the older ones keep their place and their call, only their content goes.

Invariants:
- Only result contents change: every message, block, call id and the order of everything stay,
  so call/result pairs are intact under every provider rule.
- A result is keyed by its call's tool name (lower-cased) and arguments: read tools by path
  (`file_path`, else `path`), search tools by `pattern` and `path`, shell tools by the first 200
  characters of `command`. A result whose call is not in the context, whose arguments are not a
  JSON object, or whose key argument is missing or empty, is never touched.
- For each key the newest result (latest in the view) keeps its content; older ones become
  the placeholder with `{tool}` filled in with the lower-cased tool name; their images go too.
- Idempotent: `microcompact(microcompact(x)) == microcompact(x)`, and a result already holding
  its placeholder is left as it is (the same message objects, no event).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ctxlab.core.messages.blocks import Block, ToolCallBlock
from ctxlab.core.messages.edits import holds_only, replace_blocks, with_output
from ctxlab.core.messages.memo import IdentityMemo
from ctxlab.core.messages.message import Message
from ctxlab.core.messages.templates import fill
from ctxlab.core.messages.units import BlockRef, ViewUnit, call_blocks, result_block, result_ref, view_units
from ctxlab.core.settings import SettingError

Key = tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class MicrocompactParams:
    """nonoka's key rules; the placeholder wording is ctxlab's own.

    Attributes:
        read_tools: tools keyed by path (nonoka: read, read_file, view).
        search_tools: tools keyed by pattern and path (nonoka: grep, glob, grep_files,
            search_files).
        shell_tools: tools keyed by command (nonoka: bash, shell, execute_command, run_command).
        command_chars: how much of a shell command makes the key (nonoka: 200); 1 or more.
        placeholder: the superseded result's new content; `{tool}` is the lower-cased tool name.
    """

    read_tools: tuple[str, ...] = ("read", "read_file", "view")
    search_tools: tuple[str, ...] = ("grep", "glob", "grep_files", "search_files")
    shell_tools: tuple[str, ...] = ("bash", "shell", "execute_command", "run_command")
    command_chars: int = 200
    placeholder: str = "[superseded by a newer {tool} result]"

    def __post_init__(self) -> None:
        if self.command_chars < 1:
            raise SettingError(
                ("command_chars",),
                f"command_chars={self.command_chars}: a shell result's key is the first command_chars "
                "characters of its command, so this is a length: 0 would key every command alike, "
                "a negative one cuts from the end; use 1 or more (nonoka keys on 200)",
            )


@dataclass(frozen=True, slots=True, kw_only=True)
class Microcompaction:
    """The context after microcompact and the call ids whose results it replaced just now."""

    messages: tuple[Message, ...]
    superseded: tuple[str, ...]


def parse_arguments(raw: str) -> dict[str, object]:
    """A call's arguments as a mapping, or `{}` when they are not a JSON object.

    >>> parse_arguments('{"path": "a.py"}'), parse_arguments("[1]"), parse_arguments("{oops")
    ({'path': 'a.py'}, {}, {})
    """
    try:
        loaded = json.loads(raw)
    except json.JSONDecodeError:
        return {}
    return loaded if isinstance(loaded, dict) else {}


def superseding_key(tool: str, arguments: Mapping[str, object], params: MicrocompactParams) -> Key | None:
    """The logical key of a call, or None when its results are never superseded.

    >>> p = MicrocompactParams()
    >>> superseding_key("Read", {"file_path": "a.py"}, p), superseding_key("grep", {"pattern": "x"}, p)
    (('read', 'a.py'), ('grep', 'x', ''))
    >>> superseding_key("bash", {"command": ""}, p) is None
    True
    """
    name = tool.lower()
    if name in params.read_tools:
        path = arguments.get("file_path") or arguments.get("path")
        return (name, str(path)) if path else None
    if name in params.search_tools:
        pattern = arguments.get("pattern")
        return (name, str(pattern), str(arguments.get("path") or "")) if pattern else None
    if name in params.shell_tools:
        command = arguments.get("command")
        return (name, str(command)[: params.command_chars]) if command else None
    return None


def microcompact(
    messages: Sequence[Message], params: MicrocompactParams = MicrocompactParams()
) -> Microcompaction:
    """Replace every superseded duplicate tool result with the placeholder, in place."""
    units = [u for u in view_units(messages) if u.kind == "result"]
    keys = _result_keys(messages, units, params)
    latest = {key: k for k, key in enumerate(keys) if key is not None}
    edits: dict[BlockRef, Block] = {}
    superseded: list[str] = []
    for k, (unit, key) in enumerate(zip(units, keys, strict=True)):
        if key is None or latest[key] == k:
            continue
        result = result_block(messages, unit)
        text = fill(params.placeholder, tool=key[0])
        if not holds_only(result, text):
            edits[result_ref(unit)] = with_output(result, text)
            superseded.append(result.id)
    return Microcompaction(messages=replace_blocks(messages, edits), superseded=tuple(superseded))


def _result_keys(
    messages: Sequence[Message], results: Sequence[ViewUnit], params: MicrocompactParams
) -> list[Key | None]:
    calls = call_blocks(messages)
    keys: list[Key | None] = []
    for unit in results:
        found = calls.get(unit.call_ids[0])
        keys.append(None if found is None else _call_key(found[1], params))
    return keys


def _key_of(call: ToolCallBlock, params: MicrocompactParams) -> Key | None:
    return superseding_key(call.name, parse_arguments(call.input), params)


_call_key = IdentityMemo[ToolCallBlock, Key | None](_key_of)
"""A call's key, its arguments parsed once while the call stays in the context."""
