"""Tool schemas as a model receives them.

Invariants:
- `ToolSchema.parameters` is canonical JSON text (`json.dumps(..., ensure_ascii=False)` with
  default separators and the key order it was given in), so a schema is an immutable value.
  It is strict JSON: parameters holding NaN or Infinity (which Python's `json` reads and writes,
  and no API accepts) are refused with `NotJSONError`, so no request carries them.
- `tools_json(tools)` equals `json.dumps([{"type": "function", "function": {"name", "description",
  "parameters"}}, ...], ensure_ascii=False)`: the one piece a counter reads for the tool list.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ctxlab.core.messages.blocks import utf8_len

_ITEM = '{{"type": "function", "function": {}}}'


class NotJSONError(ValueError):
    """A tool's parameters hold a number JSON cannot write (NaN, Infinity, -Infinity)."""

    def __init__(self, name: str) -> None:
        super().__init__(
            f"tool {name!r}: its parameters hold NaN or Infinity, which JSON cannot write and no API "
            "accepts; write a number there or drop the keyword"
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolSchema:
    """One function tool: name, description and JSON-schema parameters (as JSON text)."""

    name: str
    description: str
    parameters: str = '{"type": "object", "properties": {}}'
    function_json: str = field(init=False, repr=False, compare=False)
    item_bytes: int = field(init=False, repr=False, compare=False)  # of its entry in `tools_json`

    def __post_init__(self) -> None:
        value = json.loads(self.parameters)
        try:
            params = json.dumps(value, ensure_ascii=False, allow_nan=False)
        except ValueError:  # a float NaN or infinite: what JSON just read holds no cycle
            raise NotJSONError(self.name) from None
        object.__setattr__(self, "parameters", params)
        function = (
            f'{{"name": {json.dumps(self.name, ensure_ascii=False)}, '
            f'"description": {json.dumps(self.description, ensure_ascii=False)}, '
            f'"parameters": {params}}}'
        )
        object.__setattr__(self, "function_json", function)
        object.__setattr__(self, "item_bytes", utf8_len(_ITEM.format(function)))

    @classmethod
    def of(cls, name: str, description: str, parameters: Mapping[str, Any]) -> ToolSchema:
        """A schema from a parameters mapping.

        >>> ToolSchema.of("f", "Do f.", {"type": "object"}).parameters
        '{"type": "object"}'
        """
        return cls(name=name, description=description, parameters=json.dumps(parameters))

    def as_openai(self) -> dict[str, Any]:
        """The `{"type": "function", "function": {...}}` form."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": json.loads(self.parameters),
            },
        }


def tools_json(tools: Sequence[ToolSchema]) -> str:
    """The JSON text of the whole tool list in the OpenAI function form.

    >>> tools_json([ToolSchema.of("f", "d", {})])
    '[{"type": "function", "function": {"name": "f", "description": "d", "parameters": {}}}]'
    """
    items = ", ".join(_ITEM.format(t.function_json) for t in tools)
    return f"[{items}]"


def tools_bytes(tools: tuple[ToolSchema, ...]) -> int:
    """UTF-8 bytes of `tools_json(tools)`, or 0 for an empty list (an empty list is not sent).

    From each schema's own entry size: the list's brackets and the `", "` between entries add
    2 bytes each, so no JSON text is built or hashed per request.

    >>> tools = (ToolSchema.of("f", "d", {}), ToolSchema.of("中", "d", {}))
    >>> tools_bytes(tools) == len(tools_json(tools).encode()), tools_bytes(())
    (True, 0)
    """
    if not tools:
        return 0
    return sum([t.item_bytes for t in tools]) + 2 * len(tools)
