"""Letta's `put_inner_thoughts_in_kwargs`: an agent's inner thoughts sent as a `thinking` argument
of each of its calls, as Letta's OpenAI chat client sends them (read without Letta).

Facts, from letta-ai/letta 56ba9c25552605eec89de8ed3dc6394b625c1993 (Letta 0.16.8):
- Whether the setting holds (`letta/schemas/llm_config.py`, `set_default_put_inner_thoughts`;
  `letta/llm_api/openai_client.py`, `OpenAIClient.build_request_data`;
  `letta/llm_api/deepseek_client.py`): the agent's `llm_config.put_inner_thoughts_in_kwargs` is
  true, but Letta turns it off for an OpenAI reasoning model (a `model` starting `o1`, `o3`, `o4`
  or `gpt-5`), a Claude 3.7 / 4 / 4.5 / 4.6 model on an `anthropic` or `bedrock` endpoint, a
  `deepseek` endpoint, and a `letta_v1_agent`.
- A message's thoughts (`Message.to_openai_dict` in `letta/schemas/message.py`): its one text
  part (a `tool_return` part's `content`; `[Image Here]` for an image part); of several parts,
  the text parts joined by a blank line, then `[Image omitted]` (or `[N images omitted]`) after
  a space when it has images; none (JSON `null`) for no parts or one part of another kind.
- Each call of an assistant (or approval) message with `tool_calls` gets them
  (`add_inner_thoughts_to_tool_call`): its `arguments` read as a JSON object (`json.loads` with
  `strict=False`), the `thinking` key (`INNER_THOUGHTS_KWARG`, `letta/settings.py`) put first (an
  argument of that name keeps that place and its own value), null bytes removed from every string
  (`sanitize_null_bytes`, `letta/helpers/json_helpers.py`), and written back with
  `json.dumps(indent=2, ensure_ascii=False)`. The message's `content` is then `null` (`""` for a
  model whose name holds `gpt-oss`, `supports_content_none`); a message with no `tool_calls` (a
  plain answer) keeps its text, and reasoning parts are sent as with the setting off.
- Each tool schema gains `thinking`, first of its `properties` (`{"type": "string",
  "description": ...}`), first of its `required` (`add_inner_thoughts_to_functions`,
  `letta/llm_api/helpers.py`); the description is `INNER_THOUGHTS_KWARG_DESCRIPTION`, or
  `..._GO_FIRST` for a `model_endpoint` holding `:1234` (`letta/local_llm/constants.py`).
- What is stored: Letta takes `thinking` out of the model's calls into the message's text
  (`unpack_inner_thoughts_from_kwargs`, `letta/llm_api/helpers.py`; `get_reasoning_content` of
  `letta/interfaces/openai_streaming_interface.py`), so a file's calls lack it, and it is put
  back at each request.

With reasoning entirely off Letta scrubs the thoughts instead (`scrub_inner_thoughts_from_messages`,
`letta/helpers/reasoning_helper.py`, called by `LettaAgentV2._refresh_messages` in
`letta/agents/letta_agent_v2.py` before each step's request, and by `LettaAgent` in
`letta/agents/letta_agent.py`; `AgentLoop.load`, `letta/agents/agent_loop.py`, runs every agent
type through `LettaAgentV2` or its subclasses): when the validated `llm_config` has
`put_inner_thoughts_in_kwargs` false (set off, absent, or turned off by its validator as above),
`enable_reasoner` false (true when absent) and `max_reasoning_tokens` 0 (0 when absent)
(`is_reasoning_completely_disabled`), each `assistant` message (not an `approval`) with content
and a non-empty `tool_calls` loses its text parts, its other parts kept. Only the step's copy in
memory changes: the stored message, and so the file, keeps the text. A `letta_v1_agent` or
DeepSeek endpoint with the setting on has it turned off in memory only by the request builder,
after the step's scrub, so an agent's next request keeps its thoughts.

Only the OpenAI chat request is followed, the importer's target: Letta's Anthropic, Bedrock and
Google clients place the thoughts their own way (`to_anthropic_dict`, `to_google_dict`).

Invariants:
- Every function here is pure: it reads the values it is given and returns new ones.
- Arguments that are not a JSON object give None (Letta parses them with `demjson`, leniently, or
  fails the request: neither is reproduced; the caller keeps them as stored).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

KWARG = "thinking"
"""The argument Letta puts an agent's inner thoughts in (`INNER_THOUGHTS_KWARG`)."""
DESCRIPTION = "Deep inner monologue private to you only."
"""`INNER_THOUGHTS_KWARG_DESCRIPTION`: the description of the `thinking` parameter."""
DESCRIPTION_GO_FIRST = (
    f"{DESCRIPTION} Think before you act, so always generate arg '{KWARG}' first before any other arg."
)
"""`INNER_THOUGHTS_KWARG_DESCRIPTION_GO_FIRST`, for an LM Studio endpoint (`:1234`)."""
REASONING_MODELS = ("o1", "o3", "o4", "gpt-5")
"""Model name prefixes Letta takes for OpenAI reasoning models (the setting off)."""
CLAUDE_MODELS = (
    "claude-3-7-sonnet",
    "claude-sonnet-4",
    "claude-opus-4",
    "claude-haiku-4-5",
)
"""Model name prefixes on an `anthropic` or `bedrock` endpoint Letta turns the setting off for."""


@dataclass(frozen=True, slots=True)
class InKwargs:
    """The setting on, as an agent's requests show it: the `thinking` parameter's description and
    the `content` of a message whose thoughts went into its calls (None: JSON `null`)."""

    description: str
    content: str | None


def in_kwargs(agent: Mapping[str, Any]) -> InKwargs | None:
    """How the agent sends its inner thoughts in its calls; None when it does not (the setting off,
    or turned off by Letta)."""
    config = agent.get("llm_config")
    if not isinstance(config, Mapping) or not _validated_on(config):
        return None
    if agent.get("agent_type") == "letta_v1_agent" or config.get("model_endpoint_type") == "deepseek":
        return None
    model, endpoint = config.get("model"), config.get("model_endpoint")
    name = model if isinstance(model, str) else ""
    lm_studio = isinstance(endpoint, str) and ":1234" in endpoint
    return InKwargs(DESCRIPTION_GO_FIRST if lm_studio else DESCRIPTION, "" if "gpt-oss" in name else None)


def _validated_on(config: Mapping[str, Any]) -> bool:
    """Whether `put_inner_thoughts_in_kwargs` is on once Letta's `LLMConfig` validator has run: set
    true, and not an OpenAI reasoning model nor a Claude model it turns the setting off for."""
    if config.get("put_inner_thoughts_in_kwargs") is not True:
        return False
    model = config.get("model")
    name = model if isinstance(model, str) else ""
    claude = config.get("model_endpoint_type") in ("anthropic", "bedrock") and name.startswith(CLAUDE_MODELS)
    return not (name.startswith(REASONING_MODELS) or claude)


def reasoning_off(agent: Mapping[str, Any]) -> bool:
    """Whether Letta scrubs the agent's inner thoughts beside its calls: its `llm_config` has
    reasoning entirely off (see the module docstring); an agent with no `llm_config` keeps them."""
    config = agent.get("llm_config")
    if not isinstance(config, Mapping):
        return False
    tokens = config.get("max_reasoning_tokens", 0)
    return (
        not _validated_on(config)
        and config.get("enable_reasoner") is False
        and not isinstance(tokens, bool)
        and tokens == 0
    )


def thoughts(content: object) -> str | None:
    """A message's inner thoughts as Letta reads them from its content parts (see the module
    docstring); the parts are the importer's, already checked."""
    if isinstance(content, str):
        return content
    parts = [p for p in content if isinstance(p, Mapping)] if isinstance(content, list) else []
    if len(parts) == 1:
        return _one(parts[0])
    if not parts:
        return None
    text = "\n\n".join(str(p.get("text")) for p in parts if p.get("type") == "text")
    images = sum(p.get("type") == "image" for p in parts)
    if not images:
        return text
    omitted = "[Image omitted]" if images == 1 else f"[{images} images omitted]"
    return f"{text} {omitted}" if text else omitted


def _one(part: Mapping[str, Any]) -> str | None:
    """The thoughts of a message of one part: its text, a tool return's content, or Letta's
    placeholder for an image; none for a part of another kind."""
    kind = part.get("type")
    if kind == "image":
        return "[Image Here]"
    value = part.get("text") if kind == "text" else part.get("content") if kind == "tool_return" else None
    return value if isinstance(value, str) else None


def with_thoughts(arguments: str, inner: str | None) -> str | None:
    """A call's arguments text with the thoughts first, as Letta writes it; None when the
    arguments are not a JSON object (or nest too deep to read or write)."""
    try:
        value = json.loads(arguments, strict=False)
        if not isinstance(value, dict):
            return None
        return json.dumps(_no_nul({KWARG: inner, **value}), indent=2, ensure_ascii=False)
    except (ValueError, RecursionError):
        return None


def _no_nul(value: Any) -> Any:
    """A JSON value with the null bytes of its strings (keys too) removed."""
    if isinstance(value, str):
        return value.replace("\x00", "")
    if isinstance(value, dict):
        return {_no_nul(k): _no_nul(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_no_nul(item) for item in value]
    return value


def with_parameter(parameters: Mapping[str, Any], description: str) -> dict[str, Any]:
    """A tool's parameters with `thinking` first of its properties and of its `required` (kept
    where it is when listed already); no properties read as none."""
    declared = parameters.get("properties")
    properties = declared if isinstance(declared, Mapping) else {}
    listed = parameters.get("required")
    required = list(listed) if isinstance(listed, list) else []
    return {
        **parameters,
        "properties": {KWARG: {"type": "string", "description": description}, **properties},
        "required": required if KWARG in required else [KWARG, *required],
    }
