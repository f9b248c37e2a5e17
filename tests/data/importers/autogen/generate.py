"""Writes the AutoGen samples beside this file by running autogen-agentchat offline.

Run with an environment holding autogen-agentchat and autogen-ext (0.7.5 made the committed
files): `python generate.py`. Every model answer is scripted (`ReplayChatCompletionClient`), and
the message ids and times the team's manager keeps are a counter and a fixed clock, so the files
come out the same on every run (every `uuid4` is a counter).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import autogen_agentchat.messages as chat_messages
from autogen_agentchat.agents import AssistantAgent
from autogen_agentchat.conditions import MaxMessageTermination
from autogen_agentchat.messages import MultiModalMessage
from autogen_agentchat.teams import RoundRobinGroupChat
from autogen_core import FunctionCall, Image
from autogen_core.memory import ListMemory, MemoryContent, MemoryMimeType
from autogen_core.model_context import UnboundedChatCompletionContext
from autogen_core.models import CreateResult, RequestUsage, SystemMessage
from autogen_ext.models.replay import ReplayChatCompletionClient
from PIL import Image as PILImage

HERE = Path(__file__).resolve().parent
USAGE = RequestUsage(prompt_tokens=10, completion_tokens=5)
TOOLS_MODEL = {
    "vision": True,
    "function_calling": True,
    "json_output": False,
    "family": "unknown",
    "structured_output": False,
}
_ids = itertools.count(1)
uuid.uuid4 = lambda: uuid.UUID(int=next(_ids))


class _Clock(datetime):
    @classmethod
    def now(cls, tz: Any = None) -> datetime:  # noqa: ARG003
        return datetime(2025, 7, 1, 12, 0, 0, tzinfo=timezone.utc)


chat_messages.datetime = _Clock  # type: ignore[attr-defined,misc]


def get_weather(city: str) -> str:
    """The weather of a city."""
    return f"{city}: sunny, 24 C"


def read_file(path: str) -> str:
    """The text of a file."""
    raise FileNotFoundError(f"no such file: {path}")


def calls(thought: str | None, *called: tuple[str, str, str]) -> CreateResult:
    listed = [FunctionCall(id=i, name=n, arguments=a) for i, n, a in called]
    return CreateResult(finish_reason="function_calls", content=listed, usage=USAGE, cached=False, thought=thought)


def text(answer: str, thought: str | None = None) -> CreateResult:
    return CreateResult(finish_reason="stop", content=answer, usage=USAGE, cached=False, thought=thought)


def write(name: str, value: Any) -> None:
    (HERE / name).write_text(json.dumps(value, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


async def assistant_state() -> None:
    """One agent, two turns: an image with the question, two parallel calls (one raising), the
    answer; then a retry of the failed read and an answer with a reasoning model's thought."""
    client = ReplayChatCompletionClient(
        [
            calls(
                "I will check the weather and read the notes.",
                ("call-1", "get_weather", '{"city": "Paris"}'),
                ("call-2", "read_file", '{"path": "notes.txt"}'),
            ),
            text("The picture is a red square; Paris is sunny, and notes.txt does not exist."),
            calls(None, ("call-3", "read_file", '{"path": "todo.txt"}')),
            text("todo.txt does not exist either.", thought="Both files are missing; say so briefly."),
        ],
        model_info=TOOLS_MODEL,  # type: ignore[arg-type]
    )
    memory = ListMemory(memory_contents=[MemoryContent(content="The user prefers short answers.", mime_type=MemoryMimeType.TEXT)])
    agent = AssistantAgent(
        "assistant",
        model_client=client,
        tools=[get_weather, read_file],
        system_message="You are a helpful assistant.",
        reflect_on_tool_use=True,
        memory=[memory],
    )
    picture = Image(PILImage.new("RGB", (2, 2), (255, 0, 0)))
    await agent.run(task=MultiModalMessage(content=["What is in this picture, and the weather in Paris?", picture], source="user"))
    await agent.run(task="Then read todo.txt.")
    write("assistant-state.json", await agent.save_state())


async def team_state() -> None:
    """A round-robin team of two agents, the first calling a tool."""
    forecaster = AssistantAgent(
        "forecaster",
        model_client=ReplayChatCompletionClient(
            [
                calls(None, ("call-1", "get_weather", '{"city": "Lyon"}')),
                text("Lyon is sunny, 24 C."),
                text("Enjoy the walk."),
            ],
            model_info=TOOLS_MODEL,  # type: ignore[arg-type]
        ),
        tools=[get_weather],
        system_message="You forecast the weather.",
        reflect_on_tool_use=True,
    )
    planner = AssistantAgent(
        "planner",
        model_client=ReplayChatCompletionClient(["A fine day for a walk by the river."]),
        system_message="You plan the day.",
    )
    team = RoundRobinGroupChat([forecaster, planner], termination_condition=MaxMessageTermination(4))
    await team.run(task="Plan my afternoon in Lyon.")
    write("team-state.json", await team.save_state())


async def context_messages() -> None:
    """The messages of a model context given a system message, as `get_messages()` lists them."""
    context = UnboundedChatCompletionContext(initial_messages=[SystemMessage(content="Answer in one line.")])
    agent = AssistantAgent(
        "helper",
        model_client=ReplayChatCompletionClient(
            [calls(None, ("call-1", "get_weather", '{"city": "Nice"}')), text("Nice: sunny, 24 C.")],
            model_info=TOOLS_MODEL,  # type: ignore[arg-type]
        ),
        tools=[get_weather],
        model_context=context,
        reflect_on_tool_use=True,
    )
    await agent.run(task="Weather in Nice?")
    write("context-messages.json", [m.model_dump(mode="json") for m in await context.get_messages()])


async def main() -> None:
    await assistant_state()
    await team_state()
    await context_messages()


if __name__ == "__main__":
    asyncio.run(main())
