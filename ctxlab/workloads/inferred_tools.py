"""Tool schemas for a transcript that declares none, read off its calls.

A transcript in the lab's JSONL carries the calls an agent made, not the tools it offered. Its
requests must still declare every tool they name: the Anthropic Messages API refuses a request
holding `tool_use` or `tool_result` blocks without `tools` ("Requests which include tool_use or
tool_result blocks must define tools"), and Bedrock's Converse API one without `toolConfig`. So
where neither the file nor a `--tools` file (a `tools:` field) gives schemas, the replay offers
one schema per tool the transcript calls.

Invariants:
- One schema per distinct tool name, in the order of the first call to each; no call, no schema.
- A schema's description is empty and its parameters are an object whose properties are the
  keys of the calls' arguments (those that are JSON objects), in the order first seen, each
  typed by its values' JSON type where all calls agree (an array with `items: {}`, which OpenAI
  requires), untyped (`{}`) where they do not.
  Arguments that are no JSON object add no property.
- The result depends on the calls alone, so a replay stays deterministic.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from ctxlab.core.messages.tools import ToolSchema

_TYPES: tuple[tuple[type, str], ...] = (
    (bool, "boolean"),  # before int: a bool is an int in Python
    (int, "integer"),
    (float, "number"),
    (str, "string"),
    (list, "array"),
    (dict, "object"),
)


def json_type(value: object) -> str:
    """The JSON-schema type of a value JSON decoded.

    >>> [json_type(v) for v in (True, 1, 1.5, "a", [], {}, None)]
    ['boolean', 'integer', 'number', 'string', 'array', 'object', 'null']
    """
    return next((name for kind, name in _TYPES if isinstance(value, kind)), "null")


def _arguments(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError:  # arguments that are no JSON (a raw command): no property to read
        return {}
    return value if isinstance(value, dict) else {}


def inferred_schemas(calls: Iterable[tuple[str, str]]) -> tuple[ToolSchema, ...]:
    """The schemas of the tools `calls` name, each call a `(tool name, arguments text)`.

    >>> calls = [("f", '{"a": 1, "b": true}'), ("g", "ls"), ("f", '{"a": "x"}')]
    >>> [(s.name, s.parameters) for s in inferred_schemas(calls)]  # doctest: +NORMALIZE_WHITESPACE
    [('f', '{"type": "object", "properties": {"a": {}, "b": {"type": "boolean"}}}'),
     ('g', '{"type": "object", "properties": {}}')]
    """
    keys: dict[str, dict[str, set[str]]] = {}
    for name, text in calls:
        seen = keys.setdefault(name, {})
        for key, value in _arguments(text).items():
            seen.setdefault(key, set()).add(json_type(value))
    return tuple(_schema(name, seen) for name, seen in keys.items())


def _property(types: set[str]) -> dict[str, Any]:
    if len(types) != 1:
        return {}
    kind = next(iter(types))
    # OpenAI refuses an array schema without `items` ("array schema missing items")
    return {"type": kind, "items": {}} if kind == "array" else {"type": kind}


def _schema(name: str, seen: dict[str, set[str]]) -> ToolSchema:
    properties = {key: _property(types) for key, types in seen.items()}
    return ToolSchema.of(name, "", {"type": "object", "properties": properties})
