"""A minimal real agentscope 2.0.11 Agent for calling its methods directly (test code only)."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

from ctxlab.core.messages import Message
from tests.parity.bridge import as_msg

T = TypeVar("T")
AGENT = "agent"


def run(coro: Coroutine[Any, Any, T]) -> T:
    """Run one of agentscope's coroutines to completion."""
    return asyncio.run(coro)


def minimal_agent(system_prompt: str = "S", context_size: int = 4000, **configs: Any) -> Any:
    """An Agent whose model refuses to be called: for exercising its pure-ish methods."""
    from agentscope.agent import Agent
    from agentscope.model import ChatModelBase
    from pydantic import BaseModel

    class _NoCalls(ChatModelBase):
        async def _call_api(self, *args: Any, **kwargs: Any) -> Any:
            raise AssertionError("this agent's model must not be called")

    class _Params(BaseModel):
        pass

    model = _NoCalls(
        credential=None, model="none", parameters=_Params(), stream=False, context_size=context_size
    )  # type: ignore[arg-type]
    return Agent(name=AGENT, system_prompt=system_prompt, model=model, **configs)


def load_state(agent: Any, context: list[Message], summary: str = "", reply_id: str | None = None) -> None:
    """Put a ctxlab context into the agent's state (assistant messages named as the agent)."""
    msgs = [as_msg(m) for m in context]
    for msg, message in zip(msgs, context, strict=True):
        msg.name = AGENT if message.role == "assistant" else message.role
    agent.state.context = msgs
    agent.state.summary = summary
    if reply_id is not None:
        agent.state.reply_id = reply_id


def signature(msgs: list[Any]) -> list[tuple[str, str, list[tuple[str, str]]]]:
    """Role, id and (kind, id-or-text) of each block: what two contexts must agree on."""
    return [(m.role, m.id, [_block_sig(b) for b in m.content]) for m in msgs]


def _block_sig(block: Any) -> tuple[str, str]:
    kind = block.type
    if kind in ("tool_call", "tool_result"):
        return kind, block.id
    if kind == "text":
        return kind, block.text
    if kind == "thinking":
        return kind, block.thinking
    if kind == "hint":
        return kind, block.hint if isinstance(block.hint, str) else repr(
            [getattr(p, "text", "data") for p in block.hint]
        )
    return kind, ""


def our_signature(msgs: tuple[Message, ...]) -> list[tuple[str, str, list[tuple[str, str]]]]:
    """`signature` of ctxlab messages (through the agentscope conversion)."""
    return signature([as_msg(m) for m in msgs])
