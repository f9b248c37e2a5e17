"""Building blocks for generated scripts: a bank of tool schemas, realistic inputs, sized texts.

Invariants:
- Every text is made by `sized_text(seed, path, nbytes, kind)`: exactly `nbytes` UTF-8 bytes,
  drawn from the generator derived from `seed` and the item's `path`.
- Inputs are JSON text as a model writes them: `json.dumps(mapping, ensure_ascii=False)`.
- The schemas are flat JSON-schema tool descriptions in the style agents ship; their byte size
  is part of every request, so they are fixed text.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field

from ctxlab.core.messages.blocks import Part, TextBlock
from ctxlab.core.messages.tools import ToolSchema
from ctxlab.core.world.script import ScriptedCall
from ctxlab.workloads import banks as b
from ctxlab.workloads.content import Spec
from ctxlab.workloads.filler import FillerKind, filler_at
from ctxlab.workloads.format import ProbeSpec

BankTool = Literal[
    "retrieve",
    "Read",
    "grep",
    "bash",
    "Edit",
    "web_search",
    "fetch_page",
    "screenshot",
    "get_user_details",
    "get_order_details",
    "cancel_pending_order",
    "update_address",
]
"""Names of the tools in the schema bank."""


class GeneratorParams(Spec):
    """Parameters every generator takes."""

    probes: list[ProbeSpec] = Field(default_factory=list, description="Facts, rules and artifacts to plant.")


def _object(properties: Mapping[str, str], required: tuple[str, ...]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {name: {"type": "string", "description": text} for name, text in properties.items()},
        "required": list(required),
    }


_SCHEMAS: dict[str, tuple[str, dict[str, Any]]] = {
    "retrieve": ("Retrieve documents.", {"type": "object"}),
    "Read": (
        "Read a file from the local filesystem and return its contents with line numbers.",
        _object({"file_path": "Absolute or repository-relative path of the file to read."}, ("file_path",)),
    ),
    "grep": (
        "Search file contents with a regular expression; returns matching lines as path:line:text.",
        _object(
            {"pattern": "The regular expression to search for.", "path": "File or folder to search."},
            ("pattern",),
        ),
    ),
    "bash": (
        "Run a shell command in the workspace and return its standard output and error.",
        _object({"command": "The command line to run."}, ("command",)),
    ),
    "Edit": (
        "Replace an exact string in a file with a new string.",
        _object(
            {
                "file_path": "The file to modify.",
                "old_string": "Text to replace.",
                "new_string": "Replacement.",
            },
            ("file_path", "old_string", "new_string"),
        ),
    ),
    "web_search": (
        "Search the web and return the top results with titles, URLs and snippets.",
        _object({"query": "The search query."}, ("query",)),
    ),
    "fetch_page": (
        "Fetch a web page and return its main text.",
        _object({"url": "The URL to fetch."}, ("url",)),
    ),
    "screenshot": (
        "Render a page or a figure and return it as an image with a caption.",
        _object({"target": "URL or file path of what to render."}, ("target",)),
    ),
    "get_user_details": (
        "Get the profile of a customer: name, contact details, membership and saved payment methods.",
        _object({"user_id": "The customer's user id, such as 'sara_doe_496'."}, ("user_id",)),
    ),
    "get_order_details": (
        "Get the status, items, payment and shipping of an order.",
        _object({"order_id": "The order id, such as '#W0000000'."}, ("order_id",)),
    ),
    "cancel_pending_order": (
        "Cancel a pending order. Only pending orders can be cancelled; ask the user to confirm first.",
        _object(
            {"order_id": "The order id.", "reason": "'no longer needed' or 'ordered by mistake'."},
            ("order_id", "reason"),
        ),
    ),
    "update_address": (
        "Change the shipping address of a pending order.",
        _object({"order_id": "The order id.", "address": "The full new address."}, ("order_id", "address")),
    ),
}


def schemas(*names: str) -> tuple[ToolSchema, ...]:
    """The bank's schemas for `names`, in that order.

    >>> [s.name for s in schemas("Read", "bash")]
    ['Read', 'bash']
    """
    return tuple(ToolSchema.of(name, *_SCHEMAS[name]) for name in names)


def user_parts(seed: int, turn: int, nbytes: int, kind: FillerKind = "prose") -> tuple[Part, ...]:
    """The user message of turn `turn`: one text part of exactly `nbytes` bytes."""
    return (TextBlock(text=sized_text(seed, f"turns[{turn}].user", nbytes, kind)),)


def final_text(seed: int, turn: int, nbytes: int, kind: FillerKind = "prose") -> str:
    """The final answer of turn `turn`: exactly `nbytes` bytes."""
    return sized_text(seed, f"turns[{turn}].final", nbytes, kind)


def call_path(turn: int, round_: int, index: int = 0) -> str:
    """The path of a call, as a script file names it.

    >>> call_path(0, 2, 1)
    'turns[0].rounds[2].calls[1]'
    """
    return f"turns[{turn}].rounds[{round_}].calls[{index}]"


def sized_text(seed: int, path: str, nbytes: int, kind: FillerKind = "prose") -> str:
    """Exactly `nbytes` bytes of filler for the item at `path`."""
    return filler_at(seed, path, kind, nbytes)


def sized_result(seed: int, path: str, nbytes: int, kind: FillerKind = "prose") -> tuple[Part, ...]:
    """A one-text-part tool result of exactly `nbytes` bytes."""
    return (TextBlock(text=sized_text(seed, path, nbytes, kind)),)


def call(
    tool: str, arguments: Mapping[str, Any], result: tuple[Part, ...] | None, *, error: bool = False
) -> ScriptedCall:
    """A scripted call whose input is `json.dumps(arguments, ensure_ascii=False)`."""
    return ScriptedCall(
        tool=tool, input=json.dumps(arguments, ensure_ascii=False), result=result, error=error
    )


def source_path(rng: random.Random) -> str:
    """A plausible repository path of a Python module."""
    return f"src/{rng.choice(b.FILE_STEMS)}/{rng.choice(b.FILE_STEMS)}.py"


def tool_input(tool: str, rng: random.Random) -> dict[str, Any]:
    """Realistic arguments for a call of the bank's `tool`."""
    noun, verb = rng.choice(b.NOUNS), rng.choice(b.CODE_VERBS)
    order = f"#W{rng.randrange(10**6, 10**7)}"
    match tool:
        case "retrieve" | "web_search":
            return {
                "query": f"{rng.choice(b.ADJECTIVES)} {noun} {rng.choice(b.NOUNS)} "
                f"{rng.randrange(2020, 2027)}"
            }
        case "Read":
            return {"file_path": source_path(rng)}
        case "grep":
            return {"pattern": f"def {verb}_", "path": f"src/{rng.choice(b.FILE_STEMS)}"}
        case "bash":
            return {"command": f"python -m pytest tests/test_{rng.choice(b.FILE_STEMS)}.py -q"}
        case "Edit":
            return {
                "file_path": source_path(rng),
                "old_string": f"{verb}_{noun}(",
                "new_string": f"{verb}_{noun}s(",
            }
        case "fetch_page" | "screenshot":
            key = "url" if tool == "fetch_page" else "target"
            return {key: f"https://docs.example.com/{noun}/{verb}-{rng.randrange(1, 400)}"}
        case "get_user_details":
            return {
                "user_id": f"{rng.choice(b.NAMES).lower()}_{rng.choice(b.NAMES).lower()}_"
                f"{rng.randrange(100, 999)}"
            }
        case "get_order_details":
            return {"order_id": order}
        case "cancel_pending_order":
            return {"order_id": order, "reason": rng.choice(("no longer needed", "ordered by mistake"))}
        case "update_address":
            return {
                "order_id": order,
                "address": f"{rng.randrange(1, 999)} {noun.capitalize()} St, {rng.choice(b.CITIES)}",
            }
        case _:
            return {"query": f"{noun} {rng.randrange(1000)}"}


def zh_query(rng: random.Random) -> str:
    """A short Chinese search query."""
    return f"{rng.choice(b.ZH_SUBJECTS)} {rng.choice(b.ZH_OBJECTS)} {rng.randrange(1, 40)}"


def error_text(rng: random.Random) -> str:
    """A realistic one-line error message."""
    values = {
        "host": f"{rng.choice(b.SERVICES)}.internal.example.com",
        "path": f"/srv/{rng.choice(b.FILE_STEMS)}/{rng.choice(b.FILE_STEMS)}.db",
        "table": rng.choice(b.NOUNS) + "s",
        "key": rng.choice(b.IDENTIFIERS),
    }
    return rng.choice(b.ERRORS).format(**values)


def task_subject(rng: random.Random) -> str:
    """A task subject in the imperative, as an agent writes it."""
    return f"{rng.choice(b.CODE_VERBS).capitalize()} the {rng.choice(b.ADJECTIVES)} {rng.choice(b.NOUNS)}"
