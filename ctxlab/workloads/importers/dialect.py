"""Which API a logged request speaks, where its shape alone leaves both: a request of user and
assistant messages with string contents is valid for the Anthropic Messages API and OpenAI's
Chat Completions alike, and a log of them is read the same either way; what else a request
holds tells the two apart, so each reader takes the logs that are its own.

Invariants:
- `speaks_openai` is true only for what the Anthropic Messages API never takes: OpenAI's roles
  (`system`, `developer`, `tool`, `function`), calls and results as message fields, OpenAI's
  content part types, tools declared as `{"type": "function", "function": ...}` (or the legacy
  `functions`), request keys only Chat Completions has.
- `openai_model` names an OpenAI model (`gpt-*`, `o<n>*`, `chatgpt-*`, a fine-tuned `ft:` one),
  which Anthropic's API does not serve; it decides only a request nothing else decides (user
  and assistant strings and `max_tokens`), as a proxy may send Anthropic's form to any model.
- A Chat Completions response (`object: chat.completion`, its `choices`) is told from a request
  by its own keys.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

OPENAI_ROLES = frozenset({"system", "developer", "tool", "function"})
OPENAI_FIELDS = frozenset({"tool_calls", "function_call", "tool_call_id", "refusal"})
OPENAI_PARTS = frozenset({"image_url", "input_audio", "file", "refusal", "input_text"})
OPENAI_KEYS = frozenset(
    {
        "max_completion_tokens",
        "response_format",
        "n",
        "logprobs",
        "top_logprobs",
        "logit_bias",
        "frequency_penalty",
        "presence_penalty",
        "parallel_tool_calls",
        "functions",
        "function_call",
        "stream_options",
        "reasoning_effort",
        "modalities",
        "prediction",
        "seed",
    }
)
OPENAI_MODEL = re.compile(r"([\w.-]+/)?(ft:)?(gpt-|chatgpt-|o\d)")


def is_completion(value: object) -> bool:
    """A Chat Completions response logged as an entry of its own."""
    return (
        isinstance(value, Mapping)
        and value.get("object") == "chat.completion"
        and isinstance(value.get("choices"), list)
        and "messages" not in value
    )


def speaks_openai(request: Mapping[str, Any]) -> bool:
    """Whether a request holds what only OpenAI's Chat Completions API takes (see the module
    docstring)."""
    if OPENAI_KEYS & request.keys():
        return True
    tools = request.get("tools")
    if any(isinstance(t, Mapping) and t.get("type") == "function" and "function" in t for t in _list(tools)):
        return True
    return any(_openai_message(m) for m in _list(request.get("messages")))


def openai_model(request: Mapping[str, Any]) -> bool:
    """Whether a request names an OpenAI model (see the module docstring)."""
    model = request.get("model")
    return isinstance(model, str) and OPENAI_MODEL.match(model) is not None


def _openai_message(message: object) -> bool:
    if not isinstance(message, Mapping):
        return False
    if message.get("role") in OPENAI_ROLES or OPENAI_FIELDS & message.keys():
        return True
    parts = message.get("content")
    return any(isinstance(p, Mapping) and p.get("type") in OPENAI_PARTS for p in _list(parts))


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []
