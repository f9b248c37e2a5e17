"""The OpenHands presets' count of a request's tools against LiteLLM's own `token_counter` (what
the SDK's `LLM.get_token_count` calls), run in the OpenHands environment on schemas real tools
carry: MCP tools write a property's `type` as a list (`["integer", "null"]`), some leave it out,
nest objects and arrays, or give enums."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from ctxlab.core.messages.tools import ToolSchema
from ctxlab.presets.openhands.tokens import sdk_token_count
from ctxlab.texts.openhands import ENVIRONMENT

MESSAGES = [{"role": "system", "content": "You are a test."}, {"role": "user", "content": "List the files."}]

PROPERTIES: dict[str, dict[str, object]] = {
    "a list type": {"limit": {"type": ["integer", "null"]}},
    "a list type with an enum": {"mode": {"type": ["string", "null"], "enum": ["a", "b"]}},
    "a type of one item in a list": {"path": {"type": ["string"]}},
    "no type": {"value": {"description": "anything"}},
    "a type that is an object": {"odd": {"type": {"name": "string"}}},
    "an enum of numbers": {"level": {"type": "integer", "enum": [1, 2, 3]}},
    "an array of list-typed items": {"ids": {"type": "array", "items": {"type": ["integer", "string"]}}},
    "a nested object": {
        "filter": {
            "type": "object",
            "properties": {"since": {"type": ["string", "null"], "description": "ISO date"}},
            "required": ["since"],
        }
    },
    "a boolean and a null": {"flag": {"type": "boolean"}, "nothing": {"type": "null"}},
}

LITELLM = """
import json, sys
from litellm import token_counter
cases = json.load(sys.stdin)
counts = [token_counter(model="test-model", messages=c["messages"], tools=c["tools"]) for c in cases]
print(json.dumps(counts))
"""


def _tool(properties: dict[str, object]) -> ToolSchema:
    parameters = {"type": "object", "properties": properties, "required": [next(iter(properties))]}
    return ToolSchema.of("probe", "A tool with an odd schema.", parameters)


def test_the_tools_count_as_litellm_counts_them() -> None:
    tools = {name: _tool(properties) for name, properties in PROPERTIES.items()}
    cases = [{"messages": MESSAGES, "tools": [tool.as_openai()]} for tool in tools.values()]
    real = subprocess.run(
        [str(ENVIRONMENT.interpreter()), "-c", LITELLM],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **ENVIRONMENT.env},
    )
    counted = dict(zip(tools, json.loads(real.stdout), strict=True))
    lab = {name: sdk_token_count(MESSAGES, (tool,)) for name, tool in tools.items()}
    assert lab == counted
    assert all(count > sdk_token_count(MESSAGES, ()) for count in lab.values())


@pytest.mark.parametrize("kind", [["integer", "null"], {"name": "string"}])
def test_an_unhashable_type_is_rendered_as_any_not_counted_as_0(kind: object) -> None:
    plain = sdk_token_count(MESSAGES, (_tool({"x": {"type": "custom"}}),))  # rendered as `any`
    assert sdk_token_count(MESSAGES, (_tool({"x": {"type": kind}}),)) == plain
