"""The scripted stand-ins the real agentscope agent runs against: model, tools, offloader.

Invariants:
- The model answers reasoning calls from the script in order: the current turn's next round, or
  the turn's final answer once the rounds are used up or when the agent forces a final answer
  (`tool_choice` mode `none`). It answers summary calls with the fixed summary fields, or fails
  them as `ParityConfig.fail_on` / `fail_mode` say. It records every `_call_api` call.
- A scripted tool answers the call whose id the acting middleware put in `CURRENT_CALL`, so
  results follow call ids, never arrival order.
- The offloader stores into the lab's own `InMemoryWorkspace` and returns its paths: the n-th
  context offload is `offload/context-{n:04d}.json`, the n-th tool result
  `offload/tool-result-{n:04d}.txt`, the n-th data block `workspace://offload/image-{n:04d}` plus
  an extension from the media type (`.png`, `.jpg`, ...).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from agentscope import message as am
from agentscope.credential import CredentialBase
from agentscope.formatter import OpenAIChatFormatter
from agentscope.message import Msg
from agentscope.model import ChatModelBase, ChatResponse, ChatUsage
from agentscope.permission import PermissionBehavior, PermissionContext, PermissionDecision
from agentscope.tool import ToolBase, ToolChoice, ToolChunk
from pydantic import AnyUrl

from ctxlab.core.agentscope.formatter import data_identifier
from ctxlab.core.messages.blocks import Block, DataBlock, TextBlock, ToolResultBlock, data_parts, text_pieces
from ctxlab.core.messages.message import Message
from ctxlab.core.messages.model import CallKind
from ctxlab.core.messages.tokens import AgentScopeEstimator
from ctxlab.core.messages.tools import ToolSchema
from ctxlab.core.world.script import Script, ScriptedCall, ScriptedRound
from ctxlab.engine.workspace import InMemoryWorkspace
from tests.parity.bridge import as_data, as_part, from_block, from_msg
from tests.parity.spec import ParityConfig
from tests.parity.trace import ModelCall, Offload, OffloadKind, Tokens

NO_TOKENS = Tokens(0, 0, 0)
"""The tokens of an unrecorded call: none counted."""

SUMMARY_TOOL = "generate_structured_output"
CURRENT_CALL: ContextVar[str] = ContextVar("parity_current_call")
"""The id of the tool call being executed; set per call by the acting middleware."""


class ScriptedSummaryFailure(RuntimeError):
    """The summarizer invocation failed because the script says so (`fail_mode: raise`)."""


@dataclass(slots=True)
class Progress:
    """Where the run is in the script; shared by the fake model and the middlewares."""

    turn: int = -1
    served: int = 0  # reasoning calls answered in the current turn


def round_blocks(round_: ScriptedRound) -> list[Any]:
    """The model response of one scripted round: thinking, text, then the calls of the batch."""
    blocks: list[Any] = []
    if round_.thinking:
        blocks.append(am.ThinkingBlock(thinking=round_.thinking))
    if round_.text:
        blocks.append(am.TextBlock(text=round_.text))
    for call in round_.calls:
        assert call.id is not None, "the driver plays scripts with call ids assigned"
        blocks.append(am.ToolCallBlock(id=call.id, name=call.tool, input=call.input))
    return blocks


class ScriptedChatModel(ChatModelBase):
    """A chat model that plays the script and records every API call."""

    def __init__(self, *, script: Script, config: ParityConfig, progress: Progress) -> None:
        super().__init__(
            credential=CredentialBase(),
            model="scripted",
            parameters=ChatModelBase.Parameters(),
            stream=False,
            context_size=config.context_size,
        )
        # The agent reads the formatter's media types when it takes user input; requests are
        # recorded as it formats them, as `OpenAIChatModel` sends them (thinking left out).
        self.formatter = OpenAIChatFormatter()
        self.calls: list[ModelCall] = []
        self._script = script
        self._config = config
        self._progress = progress
        self._invocations = 0
        self._summary_request: list[Msg] | None = None

    async def generate_structured_output(
        self, messages: list[Msg], structured_model: Any, **kwargs: Any
    ) -> Any:
        """One summarizer invocation: AgentScope's own ladder, with the request remembered."""
        self._invocations += 1
        self._summary_request = messages
        try:
            return await super().generate_structured_output(messages, structured_model, **kwargs)
        finally:
            self._summary_request = None

    async def _call_api(
        self,
        model_name: str,
        messages: list[Msg],
        tools: list[dict[str, Any]] | None = None,
        tool_choice: ToolChoice | None = None,
        **kwargs: Any,
    ) -> ChatResponse:
        if self._summary_request is None:
            return await self._reason(messages, tools or [], tool_choice)
        return await self._summarize(self._summary_request, messages, tools or [], tool_choice)

    async def _reason(
        self, messages: list[Msg], tools: list[dict[str, Any]], tool_choice: ToolChoice | None
    ) -> ChatResponse:
        if not self._config.record:
            return await self._answered("reasoning", messages, self._next_answer(tool_choice))
        tokens = await self.count_tokens(messages, tools)
        sent = await self.formatter.format(messages)
        # The lab counts a reasoning request as sent (its thinking aside, under `as_sent`): the
        # estimator on what the formatter wrote, not on the messages it wrote it from. Text alone
        # the formatter writes as the estimator reads the messages, so only a context with a
        # result of several parts is counted from what was written (the bench's real loop, which
        # has none, does no more work for it).
        if _formatted_otherwise(messages):
            received = await self.count_tokens(counted(sent), tools)
            held = await self.count_tokens([*counted(sent), *_thinking(messages)], tools)
        else:
            received, held = await self.count_tokens(_unthought(messages), tools), tokens
        self._record("reasoning", Tokens(held, held, received), messages, tools, tool_choice, sent=sent)
        return self._respond(self._next_answer(tool_choice), tokens)

    def _next_answer(self, tool_choice: ToolChoice | None) -> list[Any]:
        turn = self._script.turns[self._progress.turn]
        index = self._progress.served
        self._progress.served += 1
        forced_final = tool_choice is not None and tool_choice.mode == "none"
        if forced_final or index >= len(turn.rounds):
            # `OpenAIChatModel` makes no text block of an empty message content
            return [am.TextBlock(text=turn.final)] if turn.final else []
        return round_blocks(turn.rounds[index])

    async def _summarize(
        self,
        request: list[Msg],
        messages: list[Msg],
        tools: list[dict[str, Any]],
        tool_choice: ToolChoice | None,
    ) -> ChatResponse:
        if not self._config.record:
            return await self._answered("summary", messages, self._summary_answer())
        sent = await self.formatter.format(messages)
        # as a reasoning request: counted from what the formatter wrote where it wrote it otherwise
        written = counted(sent) if _formatted_otherwise(messages) else _unthought(messages)
        tokens = Tokens(
            messages=await self.count_tokens(request, None),
            preflight=await self.count_tokens(request, tools),
            as_sent=await self.count_tokens(written, tools),
        )
        self._record("summary", tokens, messages, tools, tool_choice, sent=sent)
        return self._respond(self._summary_answer(), tokens.as_sent)

    async def _answered(self, kind: CallKind, messages: list[Msg], answer: list[Any]) -> ChatResponse:
        """An unrecorded call (`ParityConfig.record` off): the request formatted, as a provider's
        client formats it, and the answer given with no usage counted (a provider reports it;
        the agent only keeps it)."""
        await self.formatter.format(messages)
        self.calls.append(ModelCall(kind=kind, tokens=NO_TOKENS, tools=(), request=(), turn=0, iteration=0))
        return self._respond(answer, 0)

    def _summary_answer(self) -> list[Any]:
        invocation = self._invocations
        if invocation not in self._config.fail_on:
            fields = json.dumps(dict(self._config.summary_fields), ensure_ascii=False)
            return [am.ToolCallBlock(id=f"summary-{invocation:04d}", name=SUMMARY_TOOL, input=fields)]
        if self._config.fail_mode == "raise":
            raise ScriptedSummaryFailure(f"the script fails summarizer invocation {invocation}")
        return [am.TextBlock(text="I will answer without calling any tool.")]

    def _record(
        self,
        kind: CallKind,
        tokens: Tokens,
        messages: list[Msg],
        tools: list[dict[str, Any]],
        tool_choice: ToolChoice | None,
        *,
        sent: list[dict[str, Any]],
    ) -> None:
        summary = kind == "summary"
        call = ModelCall(
            kind=kind,
            tokens=tokens,
            tools=tuple(t["function"]["name"] for t in tools),
            request=tuple(from_msg(m) for m in messages),
            turn=self._progress.turn,
            iteration=self._progress.served,
            invocation=self._invocations if summary else None,
            tool_choice=tool_choice.mode if tool_choice is not None else None,
            sent=tuple(sent),
        )
        self.calls.append(call)

    @staticmethod
    def _respond(content: list[Any], input_tokens: int) -> ChatResponse:
        # Usage is reported as a real provider would: its presence decides whether AgentScope adds
        # an empty usage-carrier message after a compression.
        answer = Message(role="assistant", blocks=tuple(from_block(b) for b in content))
        output_tokens = AgentScopeEstimator().count([answer], ())
        usage = ChatUsage(input_tokens=input_tokens, output_tokens=output_tokens, time=0.0)
        return ChatResponse(content=content, is_last=True, usage=usage)


class ScriptedTool(ToolBase):
    """A tool that returns the scripted result of the call being executed."""

    is_concurrency_safe = True
    is_read_only = True

    def __init__(self, schema: ToolSchema, calls: Mapping[str, ScriptedCall]) -> None:
        super().__init__()
        self.name = schema.name
        self.description = schema.description
        self.input_schema = json.loads(schema.parameters)
        self._calls = calls

    async def check_permissions(
        self, tool_input: dict[str, Any], context: PermissionContext
    ) -> PermissionDecision:
        """Always allowed: a parity run never waits for a user."""
        return PermissionDecision(behavior=PermissionBehavior.ALLOW, message=f"{self.name} is scripted.")

    async def call(self, **kwargs: Any) -> ToolChunk:
        """The scripted parts of the current call, with its scripted state."""
        call = self._calls[CURRENT_CALL.get()]
        assert call.result is not None, f"call {call.id} of {call.tool} has no scripted result"
        state = am.ToolResultState.ERROR if call.error else am.ToolResultState.SUCCESS
        return ToolChunk(content=tool_output(call), state=state)


def tool_output(call: ScriptedCall) -> list[Any]:
    """The scripted parts of `call` as agentscope blocks, each medium with the id the lab names it
    by (`data_identifier` of its place once the acting step has merged the result's texts), as
    agentscope's formatter names a medium by its block's id."""
    assert call.id is not None and call.result is not None
    out: list[Any] = []
    place = -1  # the part's place in the merged output
    for index, part in enumerate(call.result):
        after_text = index > 0 and isinstance(call.result[index - 1], TextBlock)
        place += 0 if isinstance(part, TextBlock) and after_text else 1
        if isinstance(part, DataBlock):
            out.append(as_data(part, data_identifier(call.id, place)))
        else:
            out.append(as_part(part))
    return out


def _pieces(blocks: Sequence[Block]) -> tuple[str, ...]:
    return tuple(piece for b in blocks for piece in text_pieces(b))


def _data_count(blocks: Sequence[Block]) -> int:
    return sum(len(data_parts(b)) for b in blocks)


class RecordingOffloader:
    """AgentScope's offload protocol over the lab's own `InMemoryWorkspace`, recording every offload.

    The paths are the workspace's: `offload/context-0001.json`, `offload/tool-result-0001.txt`,
    `workspace://offload/image-0001.png`, each counted per kind.
    """

    def __init__(self) -> None:
        self.workspace = InMemoryWorkspace()
        self.offloads: list[Offload] = []

    def _record(self, kind: OffloadKind, path: str, blocks: Sequence[Block]) -> str:
        self.offloads.append(
            Offload(kind=kind, path=path, texts=_pieces(blocks), data_blocks=_data_count(blocks))
        )
        return path

    async def offload_data_block(self, block: am.DataBlock) -> am.DataBlock:
        """A URL-backed copy of a base64 block; URL-backed blocks come back unchanged."""
        if isinstance(block.source, am.URLSource):
            return block
        data = from_block(block)
        assert isinstance(data, DataBlock)
        url = self._record("data", self.workspace.offload_data(data), [data])
        return am.DataBlock(source=am.URLSource(url=AnyUrl(url), media_type=data.media_type), name=block.name)

    async def offload_context(self, session_id: str, msgs: list[Msg]) -> str:
        """The path the compressed messages were saved to."""
        messages = tuple(from_msg(m) for m in msgs)
        path = self.workspace.offload_context(messages)
        return self._record("context", path, [b for m in messages for b in m.blocks])

    async def offload_tool_result(self, session_id: str, tool_result: Any) -> str:
        """The path the cut-off part of a tool result was saved to."""
        result = from_block(tool_result)
        assert isinstance(result, ToolResultBlock)
        return self._record("tool_result", self.workspace.offload_tool_result(result), [result])


def counted(sent: Sequence[Mapping[str, Any]]) -> list[Msg]:
    """What the formatter wrote as messages AgentScope's estimator counts: each text (a tool
    message's string among them), call input and medium, where it counts them (it counts text and
    call inputs joined, and a flat estimate per medium, wherever they stand)."""
    out: list[Msg] = []
    for wire in sent:
        content = wire.get("content")
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        blocks: list[Any] = [
            am.TextBlock(text=p["text"]) if p["type"] == "text" else _COUNTED_MEDIUM for p in parts
        ]
        blocks += [
            am.ToolCallBlock(id=c["id"], name=c["function"]["name"], input=c["function"]["arguments"])
            for c in wire.get("tool_calls") or ()
        ]
        out.append(Msg(name="sent", role="assistant", content=blocks))
    return out


_COUNTED_MEDIUM = am.DataBlock(
    source=am.URLSource(url=AnyUrl("https://example.com/m"), media_type="image/png")
)
"""Any medium: the estimator counts each the same."""


def _formatted_otherwise(messages: Sequence[Msg]) -> bool:
    """Whether a tool result of `messages` has several parts or a medium: the formatter joins,
    names and lists those, so what it writes counts otherwise than the messages."""
    return any(
        isinstance(block, am.ToolResultBlock)
        and not isinstance(block.output, str)
        and (len(block.output) > 1 or any(isinstance(part, am.DataBlock) for part in block.output))
        for message in messages
        for block in message.content
    )


def _thinking(messages: Sequence[Msg]) -> list[Msg]:
    """The thinking of `messages`, which the formatter leaves out, as one message."""
    thoughts: list[Any] = [b for m in messages for b in m.content if isinstance(b, am.ThinkingBlock)]
    return [Msg(name="thinking", role="assistant", content=thoughts)] if thoughts else []


def _unthought(messages: Sequence[Msg]) -> list[Msg]:
    """`messages` less their thinking blocks, which AgentScope's OpenAI chat formatter leaves out
    of the request: what the API receives, counted as AgentScope counts."""
    return [
        message.model_copy(
            update={"content": [b for b in message.content if not isinstance(b, am.ThinkingBlock)]}
        )
        for message in messages
    ]
