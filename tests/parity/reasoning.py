"""What a request in the OpenAI chat form carries of a model's reasoning, read the same way from
a framework's request and from the lab's (`to_openai`)."""

from __future__ import annotations

import json
from typing import Any

REASONING_KEYS = ("reasoning_content", "reasoning", "thinking")
"""Where an OpenAI-compatible request could carry reasoning: a message field or a content part."""


def reasoning_fields(wire: list[dict[str, Any]]) -> tuple[str, ...]:
    """The reasoning an OpenAI-form request carries: its messages' reasoning fields and the
    content parts of a reasoning type, in order."""
    found: list[str] = []
    for message in wire:
        found += [json.dumps(message[k], ensure_ascii=False) for k in REASONING_KEYS if k in message]
        parts = message.get("content")
        if isinstance(parts, list):
            found += [
                json.dumps(p, ensure_ascii=False)
                for p in parts
                if isinstance(p, dict) and p.get("type") in REASONING_KEYS
            ]
    return tuple(found)
