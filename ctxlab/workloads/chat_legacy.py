"""OpenAI's legacy function calling, read as tool calls: an assistant message's `function_call`
(`{name, arguments}`, in place of `tool_calls`) and the `function` message that answers it
(`{"role": "function", "name": ..., "content": ...}`), as the Chat Completions API took them
before tools.

Invariants:
- The messages come out in the current form, one for one: a `function_call` becomes the
  message's one tool call, with the id `function_call_<n>` (the n-th of the file, from 1: the
  legacy form has no ids, and a count keeps a replay deterministic), and a `function` message a
  `tool` message answering the earliest unanswered legacy call, as the API paired them (one
  call at a time, its result next); the `name` it repeats is not needed.
- Every other message passes unchanged, so a file with no legacy message reads as before.
- A `function` message with no unanswered `function_call` before it, an assistant message with
  both `function_call` and `tool_calls`, and a `function_call` that is not an object naming a
  function are refused at their label: guessing would pair a result with the wrong call.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

Label = TypeVar("Label")


@dataclass(slots=True)
class Legacy:
    """The legacy calls met so far: how many, and the ids still awaiting their `function`
    message (mutable, local to one file's reading)."""

    count: int = 0
    waiting: deque[str] = field(default_factory=deque)

    def current(self, wire: object) -> tuple[object, str | None]:
        """`wire` in the current form, or why it cannot be read (see the module docstring)."""
        if not isinstance(wire, Mapping):
            return wire, None
        if wire.get("role") == "function":
            return self._answer(wire)
        if wire.get("role") == "assistant" and wire.get("function_call") is not None:
            return self._call(wire)
        return wire, None

    def _call(self, wire: Mapping[str, Any]) -> tuple[object, str | None]:
        given = wire["function_call"]
        if wire.get("tool_calls"):
            return wire, "an assistant message has both 'function_call' and 'tool_calls'; keep the one sent"
        if not isinstance(given, Mapping) or not isinstance(given.get("name"), str):
            return wire, "'function_call' must be an object with a 'name' string and its 'arguments'"
        self.count += 1
        call_id = f"function_call_{self.count}"
        self.waiting.append(call_id)
        function = {"name": given["name"], "arguments": given.get("arguments", "")}
        rest = {k: v for k, v in wire.items() if k != "function_call"}
        return {**rest, "tool_calls": [{"id": call_id, "type": "function", "function": function}]}, None

    def _answer(self, wire: Mapping[str, Any]) -> tuple[object, str | None]:
        if not self.waiting:
            return wire, (
                "a 'function' message answers no 'function_call' before it (each answers the earliest "
                "unanswered one); the file is cut or out of order"
            )
        rest = {k: v for k, v in wire.items() if k != "name"}
        return {**rest, "role": "tool", "tool_call_id": self.waiting.popleft()}, None


def current_form(
    entries: Iterable[tuple[Label, Any]], fail: Callable[[Label, str], Exception]
) -> Iterator[tuple[Label, Any]]:
    """Labelled OpenAI chat messages with their legacy function calls in the current form.

    Raises:
        Exception: `fail(label, why)` for a legacy message that cannot be read.
    """
    legacy = Legacy()
    for label, wire in entries:
        current, why = legacy.current(wire)
        if why is not None:
            raise fail(label, why)
        yield label, current
