"""Writes this folder's samples: real LlamaIndex agents on the OpenAI integration, offline.

Run where llama-index-core 0.14.25, llama-index-llms-openai 0.8.3 and pydantic 2.11.10 are
installed (not the lab's environment; this `SimpleChatStore.persist` fails under pydantic 2.14):
    python generate.py OUT_DIR
The OpenAI client is given an HTTP transport that answers each chat completion request from a
script (streamed as server-sent events when the agent streams, as it does by default), so every
message is the integration's own; ids are fixed and the run deterministic. The package is
imported inside `main` only, so that collecting this file needs nothing but the standard library.
"""

from __future__ import annotations

import asyncio
import base64
import json
import sys
from pathlib import Path
from typing import Any

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg=="
)


def _completion(message: dict[str, Any], n: int) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{n}",
        "object": "chat.completion",
        "created": 1700000000 + n,
        "model": "gpt-4o-2024-08-06",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop", "logprobs": None}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def _chunk(delta: dict[str, Any], n: int) -> str:
    body = {
        "id": f"chatcmpl-{n}",
        "object": "chat.completion.chunk",
        "created": 1700000000 + n,
        "model": "gpt-4o-2024-08-06",
        "choices": [{"index": 0, "delta": delta, "finish_reason": None, "logprobs": None}],
    }
    return f"data: {json.dumps(body)}\n\n"


def _stream(message: dict[str, Any], n: int) -> str:
    """The message as the API streams it: the role, the reasoning, the text in two pieces, then
    each call in two deltas (its id and name, then its arguments)."""
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
    if message.get("reasoning_content"):
        deltas.append({"reasoning_content": message["reasoning_content"]})
    text = message.get("content") or ""
    deltas += [{"content": text[: len(text) // 2]}, {"content": text[len(text) // 2 :]}] if text else []
    for k, c in enumerate(message.get("tool_calls") or []):
        head = {"index": k, "id": c["id"], "type": "function", "function": {"name": c["function"]["name"]}}
        deltas += [
            {"tool_calls": [head]},
            {"tool_calls": [{"index": k, "function": {"arguments": c["function"]["arguments"]}}]},
        ]
    return "".join(_chunk(d, n) for d in deltas) + "data: [DONE]\n\n"


def _calls(*calls: tuple[str, str, dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {"id": i, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
        for i, n, a in calls
    ]


SCRIPT: list[dict[str, Any]] = [
    # alice, turn 1: thinking, two parallel weather calls, then an answer
    {
        "role": "assistant",
        "content": None,
        "reasoning_content": "Two cities: ask for both at once.",
        "tool_calls": _calls(
            ("call_w1", "get_weather", {"city": "Paris"}), ("call_w2", "get_weather", {"city": "Oslo"})
        ),
    },
    {"role": "assistant", "content": "Paris is sunny at 21 °C; Oslo is rainy at 9 °C."},
    # alice, turn 2 (a user image): a call that raises, its retry, then an answer
    {
        "role": "assistant",
        "content": "Let me read your notes.",
        "tool_calls": _calls(("call_r1", "read_file", {"path": "notes.txt"})),
    },
    {
        "role": "assistant",
        "content": None,
        "tool_calls": _calls(("call_r2", "read_file", {"path": "notes.md"})),
    },
    {"role": "assistant", "content": "The picture is a single pixel; your notes say: pack an umbrella."},
    # bob: one call, then an answer
    {"role": "assistant", "content": None, "tool_calls": _calls(("call_t1", "get_time", {"zone": "UTC"}))},
    {"role": "assistant", "content": "It is 12:00 UTC."},
]


def main(out: Path) -> None:
    import httpx
    from llama_index.core.agent.workflow import FunctionAgent
    from llama_index.core.llms import ChatMessage, ImageBlock, TextBlock
    from llama_index.core.memory import ChatMemoryBuffer, Memory
    from llama_index.core.storage.chat_store import SimpleChatStore
    from llama_index.core.tools import FunctionTool
    from llama_index.llms.openai import OpenAI

    answers = iter([*SCRIPT, *SCRIPT[:5]])  # alice and bob streamed, then alice's turns again
    counter = iter(range(1000))

    async def handler(request: httpx.Request) -> httpx.Response:
        message, n = next(answers), next(counter)
        if json.loads(request.content).get("stream"):
            headers = {"content-type": "text/event-stream"}
            return httpx.Response(200, content=_stream(message, n).encode(), headers=headers)
        return httpx.Response(200, json=_completion(message, n))

    def get_weather(city: str) -> str:
        """The weather in a city."""
        return {"Paris": "sunny, 21 °C", "Oslo": "rainy, 9 °C"}[city]

    def read_file(path: str) -> str:
        """A file's text."""
        if path != "notes.md":
            raise FileNotFoundError(f"no such file: {path}")
        return "pack an umbrella"

    def get_time(zone: str) -> str:
        """The time in a zone."""
        return "12:00"

    llm = OpenAI(
        model="gpt-4o-2024-08-06",
        api_key="sk-test",
        async_http_client=httpx.AsyncClient(transport=httpx.MockTransport(handler)),
        max_retries=0,
    )
    tools = [FunctionTool.from_defaults(fn) for fn in (get_weather, read_file, get_time)]
    agent = FunctionAgent(tools=tools, llm=llm, system_prompt="You are a helpful assistant.")
    store = SimpleChatStore()

    async def turns(on: FunctionAgent, memory: Any) -> None:
        await on.run("What is the weather in Paris and Oslo?", memory=memory)
        picture = ChatMessage(
            role="user",
            blocks=[
                TextBlock(text="What is in this picture? Then read my notes."),
                ImageBlock(image=PNG, image_mimetype="image/png"),
            ],
        )
        await on.run(picture, memory=memory)

    async def run() -> list[ChatMessage]:
        await turns(agent, ChatMemoryBuffer.from_defaults(chat_store=store, chat_store_key="alice"))
        bob = ChatMemoryBuffer.from_defaults(chat_store=store, chat_store_key="bob")
        await agent.run("What is the time in UTC?", memory=bob)
        memory = Memory.from_defaults(session_id="alice")
        await turns(agent.model_copy(update={"streaming": False}), memory)
        return await memory.aget_all()

    listed = asyncio.run(run())
    store.persist(str(out / "chat_store.json"))
    dumped = [m.model_dump(mode="json") for m in listed]
    text = json.dumps(dumped, indent=2, ensure_ascii=False) + "\n"
    (out / "memory_messages.json").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
