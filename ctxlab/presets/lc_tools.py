"""A user's tool as LangChain's agent sends it to the model.

`create_agent` (and so `create_deep_agent`) binds each tool through langchain-core's
`convert_to_openai_tool` (langchain-core 1.8.3, `utils/function_calling.py` and
`utils/json_schema.py`). For a tool whose arguments are a JSON schema, the schema is first
given the tool's description (`BaseTool.tool_call_schema`), then its `$ref`s are inlined
(`dereference_refs`: not under `$defs`, a reference already being inlined left out to break a
cycle, a reference's own keys laid over what it points to), `definitions` and `$defs` dropped,
its own `title` and `description` taken off (the description sent is the tool's, else the
schema's), and every `title` key removed except a property named `title`. Counters that read the
tools as LangChain counts them (deepagents' `count_tokens_approximately(tools=)`) read the schema
before any of this (`BoundTool.counted_chars`).

Invariants:
- `bound_tool` is pure and idempotent on what it returns: a schema with no `title`, `$ref`,
  `$defs`, `definitions` or top-level `description` is sent as written.
- A `BoundTool` equals no plain `ToolSchema`; it carries the characters LangChain's counter
  reads of the tool as given.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any

from ctxlab.core.messages.tools import ToolSchema
from ctxlab.texts.deepagents import counted_chars


@dataclass(frozen=True, slots=True, kw_only=True)
class BoundTool(ToolSchema):
    """A tool as LangChain sends it, with what its counter reads of the tool as given."""

    counted_chars: int = field(default=0, compare=False)


def _pointed(path: str, schema: Any) -> Any:
    """What a `#/...` reference points to in `schema` (a copy)."""
    if not path.startswith("#"):
        raise ValueError(f"tool schema reference {path!r}: LangChain reads only '#/...' references")
    found = schema
    for key in path.split("/")[1:]:
        if isinstance(found, dict) and key in found:
            found = found[key]
        elif isinstance(found, list) and key.isdigit() and int(key) < len(found):
            found = found[int(key)]
        else:
            raise ValueError(f"tool schema reference {path!r} points to nothing")
    return copy.deepcopy(found)


def _inlined(value: Any, whole: dict[str, Any], open_refs: frozenset[str]) -> Any:
    """`value` with its references inlined (see the module docstring)."""
    if isinstance(value, list):
        return [_inlined(item, whole, open_refs) for item in value]
    if not isinstance(value, dict):
        return value
    ref = value.get("$ref")
    own = {k: v for k, v in value.items() if k != "$ref"} if ref is not None else value
    done = {k: copy.deepcopy(v) if k == "$defs" else _inlined(v, whole, open_refs) for k, v in own.items()}
    if ref is None or ref in open_refs:
        return done
    target = _inlined(_pointed(ref, whole), whole, open_refs | {ref})
    if not done:
        return target
    return {**(target if isinstance(target, dict) else {}), **done}


def _untitled(schema: dict[str, Any], parent: str = "") -> dict[str, Any]:
    """`schema` without `title` keys, but for a property named so."""
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" and not (isinstance(value, dict) and parent == "properties"):
            continue
        out[key] = _untitled(value, key) if isinstance(value, dict) else value
    return out


def bound_tool(tool: ToolSchema) -> BoundTool:
    """`tool` as LangChain's agent sends it (module docstring).

    >>> schema = {"title": "F", "properties": {"a": {"title": "A"}}}
    >>> bound_tool(ToolSchema.of("f", "Do f.", schema)).parameters
    '{"properties": {"a": {}}}'
    """
    given = json.loads(tool.parameters)
    schema = {**given, "description": tool.description} if tool.description else given
    schema = _inlined(schema, schema, frozenset())
    schema.pop("definitions", None)
    schema.pop("$defs", None)
    schema.pop("title", None)
    described = schema.pop("description", "")
    return BoundTool(
        name=tool.name,
        description=tool.description or described,
        parameters=json.dumps(_untitled(schema)),
        counted_chars=counted_chars(tool),
    )
