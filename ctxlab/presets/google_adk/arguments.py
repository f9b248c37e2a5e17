"""A call's arguments as Google ADK 2.13.0 reads them (`models/lite_llm.py`,
`_parse_tool_call_arguments` and the object check of `_model_response_to_generate_content_response`).

ADK reads strict JSON first, then repairs what a provider may hand back: a Python literal
(`ast.literal_eval`), object keys left unquoted, a Markdown code fence around either. A call
whose arguments are then still unreadable, or are not an object, is discarded by the adapter
(`MALFORMED_FUNCTION_CALL`), so no ADK session holds it.

Invariants:
- `parsed_arguments` is None exactly where ADK discards the call; otherwise it is the object
  ADK keeps as `FunctionCall.args`, which `json.dumps` can write (keys as strings).
- Empty arguments are `{}`; blank ones (whitespace) are not (ADK tests `not arguments`).
"""

from __future__ import annotations

import ast
import json
import re

_UNQUOTED_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def parsed_arguments(raw: str) -> dict[str, object] | None:
    """The object ADK keeps for arguments written `raw`, or None where it discards the call.

    >>> parsed_arguments("{'q': 'x', 'n': True}"), parsed_arguments('{q: 1}'), parsed_arguments("")
    ({'q': 'x', 'n': True}, {'q': 1}, {})
    >>> parsed_arguments('```json\\n{"q": 1}\\n```'), parsed_arguments("[1]"), parsed_arguments(" ")
    ({'q': 1}, None, None)
    """
    if not raw:
        return {}
    value = _repaired(raw)
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        return None
    try:
        json.dumps(value)
    except (TypeError, ValueError):  # a literal JSON cannot write (a set, bytes): no request holds it
        return None
    return value


def _repaired(raw: str) -> object:
    """What ADK's parse returns, or None where it raises: each form is tried in ADK's order."""
    candidates = [raw]
    quoted = _quote_unquoted_keys(raw)
    if quoted != raw:
        candidates.append(quoted)
    stripped = raw.strip()
    if stripped.startswith("```") and stripped.endswith("```") and len(stripped) >= 6:
        inner = stripped[3:-3].strip()
        inner = inner[4:].strip() if inner.lower().startswith("json") else inner
        if inner and inner != raw:
            candidates += [inner] + ([q] if (q := _quote_unquoted_keys(inner)) != inner else [])
    for text in candidates:
        for reader in (json.loads, ast.literal_eval):
            try:
                return reader(text)
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                continue
    return None


def _quote_unquoted_keys(value: str) -> str:
    """`_quote_unquoted_json_object_keys`: a bare key after `{` or `,` (and blanks) quoted when a
    colon follows it; string contents (either quote) are never touched."""
    out: list[str] = []
    i, quote, escaped = 0, "", False
    while i < len(value):
        char = value[i]
        if quote:
            out.append(char)
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = ""
            i += 1
        elif char in "\"'":
            quote = char
            out.append(char)
            i += 1
        elif char in "{,":
            i = _after_separator(value, i + 1, out, char)
        else:
            out.append(char)
            i += 1
    return "".join(out)


def _after_separator(value: str, i: int, out: list[str], char: str) -> int:
    """Appends the separator, its blanks and a bare key quoted; the index after them."""
    start = i
    while i < len(value) and value[i].isspace():
        i += 1
    out += [char, value[start:i]]
    key = _UNQUOTED_KEY.match(value, i)
    if key is None:
        return i
    colon = key.end()
    while colon < len(value) and value[colon].isspace():
        colon += 1
    if colon < len(value) and value[colon] == ":":
        out += [f'"{key.group(0)}"', value[key.end() : colon]]
        return colon
    return i
