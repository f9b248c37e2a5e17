"""ctxlab's LangChain view to and from the installed langchain-core messages."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.messages.block_translators.openai import convert_to_openai_data_block
from langchain_core.messages.utils import convert_to_openai_messages

from ctxlab.presets.lc_messages import LCCall, LCMessage


def to_langchain(message: LCMessage) -> BaseMessage:
    """The langchain-core message `message` stands for."""
    content: Any = message.content if isinstance(message.content, str) else [dict(b) for b in message.content]
    match message.kind:
        case "human":
            return HumanMessage(content=content, name=message.name)
        case "system":
            return SystemMessage(content=content, name=message.name)
        case "tool":
            return ToolMessage(content=content, tool_call_id=message.tool_call_id, name=message.name)
        case "ai":
            extra: dict[str, Any] = {}
            if message.provider is not None:
                extra["response_metadata"] = {"model_provider": message.provider}
            if message.total_tokens is not None:
                extra["usage_metadata"] = {
                    "input_tokens": message.total_tokens,
                    "output_tokens": 0,
                    "total_tokens": message.total_tokens,
                }
            calls = [{"name": c.name, "args": c.arguments(), "id": c.id} for c in message.tool_calls]
            return AIMessage(content=content, tool_calls=calls, name=message.name, **extra)


def from_langchain(message: BaseMessage) -> LCMessage:
    """ctxlab's view of a langchain-core message (text, tool calls, names); a call's arguments as
    langchain-core's OpenAI form writes them (`convert_to_openai_messages`), and a standard image
    block (deepagents makes one of a user's image when it evicts the message) as the `image_url`
    part langchain-core's OpenAI translator sends (`convert_to_openai_data_block`)."""
    content = message.content if isinstance(message.content, str) else tuple(message.content)  # type: ignore[arg-type]
    if isinstance(content, tuple):
        content = tuple(
            convert_to_openai_data_block(b) if isinstance(b, dict) and b.get("type") == "image" else b
            for b in content
        )
    if isinstance(message, AIMessage):
        sent = convert_to_openai_messages(message).get("tool_calls", [])
        calls = tuple(
            LCCall(name=c["function"]["name"], args=c["function"]["arguments"], id=c["id"] or "")
            for c in sent
        )
        return LCMessage(kind="ai", content=content, tool_calls=calls, name=message.name)
    if isinstance(message, ToolMessage):
        return LCMessage(kind="tool", content=content, tool_call_id=message.tool_call_id, name=message.name)
    if isinstance(message, SystemMessage):
        return LCMessage(kind="system", content=content, name=message.name)
    return LCMessage(kind="human", content=content, name=message.name)
