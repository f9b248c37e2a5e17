"""ctxlab's form of a bound tool (`ctxlab.presets.lc_tools`) against the installed langchain-core
1.8.3: what `convert_to_openai_tool` sends for a tool whose arguments are a JSON schema, and what
`count_tokens_approximately(tools=)` counts of it."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from typing import Any

import pytest
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.tools import StructuredTool
from langchain_core.utils.function_calling import convert_to_openai_tool

from ctxlab.core.messages.tools import ToolSchema
from ctxlab.presets.lc_tools import bound_tool
from tests.parity.da_driver import DAConfig
from tests.parity.lc_driver import LCConfig
from tests.parity.test_deepagents_parity import compare as compare_deepagents
from tests.parity.test_langchain_parity import compare as compare_langchain
from tests.parity.workloads import TOOLS
from tests.parity.workloads import retrieval_loop as loop

ADDRESS = {"title": "Address", "type": "object", "properties": {"city": {"title": "City", "type": "string"}}}
SCHEMAS: list[dict[str, Any]] = [
    {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},  # as written
    {  # pydantic's form: titles everywhere (tau2's tools), a property named `title`
        "title": "parameters",
        "type": "object",
        "properties": {
            "first_name": {"title": "First Name", "type": "string"},
            "title": {"title": "Title", "type": "string"},
            "tags": {"type": "array", "items": [{"title": "kept in a list"}]},
        },
        "required": ["first_name"],
    },
    {  # references: plain, mixed with keys of their own, nested, and `$defs` dropped
        "type": "object",
        "description": "The schema's own description.",
        "properties": {
            "home": {"$ref": "#/$defs/Address"},
            "work": {"$ref": "#/$defs/Address", "description": "Where one works.", "title": "Work"},
            "both": {"type": "array", "items": {"$ref": "#/$defs/Pair"}},
        },
        "$defs": {
            "Address": ADDRESS,
            "Pair": {"type": "object", "properties": {"a": {"$ref": "#/$defs/Address"}}},
        },
    },
    {  # a cycle, broken where the reference is being inlined; `definitions` dropped too
        "type": "object",
        "properties": {"node": {"$ref": "#/$defs/Node"}},
        "$defs": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node", "x": 1}}}},
        "definitions": {"Unused": {"type": "string"}},
    },
]


@pytest.mark.parametrize("description", ["Look it up.", "  Padded.\n", ""])  # "": the schema's own
@pytest.mark.parametrize("schema", SCHEMAS)
def test_a_tool_is_sent_and_counted_as_langchain_binds_it(schema: dict[str, Any], description: str) -> None:
    tool = StructuredTool(name="lookup", description=description, args_schema=schema, func=lambda **_: "")
    mine = bound_tool(ToolSchema.of("lookup", description, schema))
    assert mine.as_openai() == convert_to_openai_tool(tool)
    assert math.ceil(mine.counted_chars / 4) == count_tokens_approximately([], tools=[tool])


def test_the_presets_send_titled_and_referring_schemas_as_the_agents_bind_them() -> None:
    """`langchain-summary`, `langchain-clear` and `deepagents` send a user's tool as `create_agent`
    binds it, and deepagents counts it as given (found replaying tau2's pydantic-made tools)."""
    tool = ToolSchema.of("retrieve", "Look it up.", SCHEMAS[2])
    script = replace(loop([2000] * 12), tools=(tool, TOOLS[1]))
    for config in (
        LCConfig(trigger=("tokens", 2000), keep=("messages", 3)),
        LCConfig(middleware="clear", clear={"trigger": 1000, "keep": 1}),
    ):
        ours, _ = compare_langchain(script, config)
        assert json.loads(ours.calls[0].tools[0])["function"] == bound_tool(tool).as_openai()["function"]
    ours, _ = compare_deepagents(script, DAConfig(window=8000))
    assert "summary" in [c.kind for c in ours.calls]
