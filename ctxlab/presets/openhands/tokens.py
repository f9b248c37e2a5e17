"""The token count the OpenHands SDK's condenser decides with (`LLM.get_token_count`).

The SDK counts the request it would send with LiteLLM's `token_counter`: for a model LiteLLM does
not know (every scripted one) that is the cl100k BPE over the chat-completions message dicts,
each text cut in chunks of 1,024 characters, plus fixed overheads, and the tools rendered as
TypeScript-like definitions (`_format_function_definitions`).

Per message: 3, the role, every text part, every call's arguments, the tool call id, and the
name (plus 1). Then 3 for the reply's priming; with tools the definitions and 9, less 4 when a
system message is present. Texts over 4,000,000 characters are extrapolated from samples by
LiteLLM; no workload here comes near.

A tool schema LiteLLM's renderer cannot read (an array without `items`, a property that is no
object) makes it raise; the SDK logs that and counts the request as 0 tokens, and so does
`sdk_token_count`, so such a tool never condenses by size, as in OpenHands. A `type` it does not
know, a list of types (`["integer", "null"]`, as MCP tools write) among them, it renders as
`any`: the renderer compares types by equality.

Invariant: a function of the request's wire form and the tools only.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from typing import Any

from ctxlab.core.messages.tools import ToolSchema
from ctxlab.core.wire.views import Wire
from ctxlab.tokenizers import bpe_tokens

CHUNK = 1024
PER_MESSAGE = 3
PER_NAME = 1
PRIMING = 3
TOOLS_EXTRA = 9
SYSTEM_WITH_TOOLS = -4


@functools.lru_cache(maxsize=65_536)
def count_text(text: str) -> int:
    """cl100k tokens of `text`, counted chunk by chunk as LiteLLM does (with its own BPE)."""
    return sum(bpe_tokens("cl100k_base", text[i : i + CHUNK]) for i in range(0, len(text), CHUNK))


def _parts(content: object) -> list[str]:
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [str(p.get("text", "")) for p in content if isinstance(p, Mapping) and p.get("type") == "text"]
    return []


def count_message(message: Mapping[str, Any], names: Mapping[str, str]) -> int:
    """One message's tokens; `names` gives a tool message's tool name by call id (the SDK sends it)."""
    total = PER_MESSAGE + count_text(str(message["role"]))
    total += sum(count_text(text) for text in _parts(message.get("content")))
    for call in message.get("tool_calls") or ():
        total += count_text(str(call["function"].get("arguments", "")))
    if message["role"] == "tool":
        call_id = str(message.get("tool_call_id", ""))
        total += count_text(call_id) + count_text(names.get(call_id, "")) + PER_NAME
    return total


def sdk_token_count(messages: Sequence[Wire], tools: Sequence[ToolSchema]) -> int:
    """The SDK's count of a request: messages in ctxlab's OpenAI view, and the tools sent."""
    names = {c["id"]: c["function"]["name"] for m in messages for c in m.get("tool_calls") or ()}
    total = sum(count_message(m, names) for m in messages) + PRIMING
    if tools:
        try:
            definitions = function_definitions(tools)
        except (KeyError, AttributeError, TypeError):
            return 0  # LiteLLM's renderer raised on the schema, and the SDK counts 0 on any error
        total += count_text(definitions) + TOOLS_EXTRA
        if any(m["role"] == "system" for m in messages):
            total += SYSTEM_WITH_TOOLS
    return total


def function_definitions(tools: Sequence[ToolSchema]) -> str:
    """The tools as LiteLLM renders them for counting."""
    lines = ["namespace functions {", ""]
    for tool in tools:
        parameters = json.loads(tool.parameters)
        described = (f"// {tool.description}",) if tool.description else ()
        if parameters.get("properties"):
            lines += [*described, f"type {tool.name} = (_: {{", _object(parameters, 0), "}) => any;", ""]
        else:
            lines += [*described, f"type {tool.name} = () => any;", ""]
    lines.append("} // namespace functions")
    return "\n".join(lines)


def _object(parameters: Mapping[str, Any], indent: int) -> str:
    properties = parameters.get("properties")
    if not properties:
        return ""
    required = parameters.get("required", [])
    lines: list[str] = []
    for key, props in properties.items():
        if props.get("description"):
            lines.append(f"// {props['description']}")
        optional = "" if required and key in required else "?"
        lines.append(f"{key}{optional}: {_type(props, indent)},")
    return "\n".join(" " * max(0, indent) + line for line in lines)


_SIMPLE_TYPES = (
    ("string", "string"),
    ("integer", "number"),
    ("number", "number"),
    ("boolean", "boolean"),
    ("null", "null"),
)
"""How LiteLLM's renderer writes a JSON-schema type that holds no other."""


def _type(props: Mapping[str, Any], indent: int) -> str:
    kind = props.get("type")
    if kind in ("string", "integer", "number") and "enum" in props:
        return " | ".join(f'"{item}"' for item in props["enum"])
    for name, shown in _SIMPLE_TYPES:  # by equality: a `type` may be a list (["integer", "null"])
        if kind == name:
            return shown
    if kind == "array":
        return f"{_type(props['items'], indent)}[]"
    if kind == "object":
        return f"{{\n{_object(props, indent + 2)}\n}}"
    return "any"
