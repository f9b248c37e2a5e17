"""A minimal real agentscope 2.0.11 `Agent` for parity tests: a scripted fake model, a tool that
returns scripted content, and an offloader that records what it is given (test code only).

Nothing here touches the network; the model answers from a list of responses.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from ctxlab.core.blocks import Part


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


def make_agent(
    *, model: Any = None, tools: list[Any] | None = None, offloader: Any = None, **config: Any
) -> Any:
    """A real `Agent` with the fake model; `config` goes to `ContextConfig`."""
    from agentscope.agent import Agent, ContextConfig
    from agentscope.tool import Toolkit

    return Agent(
        name="agent",
        system_prompt="You are a test agent.",
        model=model or fake_model(),
        toolkit=Toolkit(tools=tools or []),
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
