"""Real agentscope 2.0.11 agents for parity tests (test code only): a minimal one for calling its
methods directly, and one that replies through a scripted fake model, a scripted tool and an
offloader that records what it is given. Nothing here touches the network."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from types import SimpleNamespace
from typing import Any, TypeVar

from ctxlab.core.messages.blocks import Part
from ctxlab.core.messages.message import Message
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


def _fake_model_class() -> type:
    from agentscope.model import ChatModelBase, ChatResponse

    class FakeModel(ChatModelBase):  # type: ignore[misc]
        """Answers each call with the next scripted content list."""

        def __init__(self, steps: list[list[Any]]) -> None:
            from agentscope.credential import CredentialBase

            super().__init__(
                credential=CredentialBase(id="fake"),
                model="fake",
                parameters=FakeModel.Parameters(),
                stream=False,
                context_size=10**9,
            )
            self.steps = list(steps)
            # The agent asks the formatter which input media types the model takes.
            self.formatter = SimpleNamespace(supported_input_media_types=["image/*", "audio/*"])

        async def _call_api(self, model_name: str, messages: list[Any], **kwargs: Any) -> Any:
            if not self.steps:
                raise AssertionError("the fake model's script ran out")
            return ChatResponse(content=self.steps.pop(0), is_last=True)

    return FakeModel


def fake_model(steps: list[list[Any]] | None = None) -> Any:
    """A `ChatModelBase` that answers from `steps` (each a list of agentscope content blocks)."""
    return _fake_model_class()(steps or [])


def scripted_tool(name: str, content: list[Any], state: str = "success") -> Any:
    """A read-only tool that returns one chunk holding `content` (agentscope blocks) in `state`."""
    from agentscope.permission import PermissionBehavior, PermissionDecision
    from agentscope.tool import ToolBase, ToolChunk

    class ScriptedTool(ToolBase):  # type: ignore[misc]
        description = "A scripted tool."
        input_schema = {"type": "object", "properties": {}}  # noqa: RUF012
        is_concurrency_safe = True
        is_read_only = True

        async def call(self, **kwargs: Any) -> Any:
            return ToolChunk(content=[block.model_copy(deep=True) for block in content], state=state)

        async def check_permissions(self, tool_input: Any, context: Any) -> Any:
            return PermissionDecision(behavior=PermissionBehavior.ALLOW, message="allowed")

    tool = ScriptedTool()
    tool.name = name
    return tool


class RecordingOffloader:
    """Records offloaded tool results and images; `image_urls` says, per image call in order,
    which URL to return (None: return the block unchanged, so no URL)."""

    def __init__(self, image_urls: list[str | None] | None = None) -> None:
        self.tool_results: list[Any] = []
        self.images: list[Any] = []
        self.image_urls = list(image_urls or [])

    async def offload_tool_result(self, session_id: str, tool_result: Any) -> str:
        self.tool_results.append(tool_result.model_copy(deep=True))
        return f"offload/tool-{len(self.tool_results)}.json"

    async def offload_data_block(self, block: Any) -> Any:
        from agentscope.message import DataBlock, URLSource

        self.images.append(block)
        url = self.image_urls[len(self.images) - 1] if len(self.images) <= len(self.image_urls) else None
        if url is None:
            return block
        return DataBlock(source=URLSource(url=url, media_type=block.source.media_type), name=block.name)

    async def offload_context(self, session_id: str, msgs: list[Any]) -> str:
        return f"context/{session_id}.json"


def replying_agent(steps: list[list[Any]], tools: list[Any], offloader: Any = None, **config: Any) -> Any:
    """A real `Agent` that replies with `fake_model(steps)` and `tools`; `config` goes to
    `ContextConfig`."""
    from agentscope.agent import Agent, ContextConfig
    from agentscope.tool import Toolkit

    return Agent(
        name=AGENT,
        system_prompt="S",
        model=fake_model(steps),
        toolkit=Toolkit(tools=tools),
        offloader=offloader,
        context_config=ContextConfig(**config),
    )


_VOLATILE = frozenset({"id", "created_at", "finished_at", "metadata"})


def normalized(value: Any) -> Any:
    """An agentscope model (or a list of them) as plain data, without ids, times and metadata."""
    if hasattr(value, "model_dump"):
        value = value.model_dump(mode="json")
    if isinstance(value, dict):
        return {k: normalized(v) for k, v in value.items() if k not in _VOLATILE}
    if isinstance(value, list):
        return [normalized(v) for v in value]
    return value


def normalized_parts(parts: tuple[Part, ...]) -> list[Any]:
    """Our parts as agentscope would hold them, normalized."""
    from tests.parity.bridge import as_part

    return [normalized(as_part(p)) for p in parts]
