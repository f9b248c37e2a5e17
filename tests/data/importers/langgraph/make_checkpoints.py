"""Writes `checkpoints.sqlite`: a LangGraph `SqliteSaver` database of three threads.

Run with langgraph 1.2.24, langgraph-checkpoint 4.3.2, langgraph-checkpoint-sqlite 3.1.2 and
langchain-core 1.8.3 installed (`python make_checkpoints.py OUT.sqlite`); no model is called:
the agent node is scripted. Thread `weather` has a system prompt, two parallel calls of which
one failed (`status="error"`), and a second turn whose user message carries an image; thread
`trimmed` drops its first exchange with `RemoveMessage`s; thread `nested` runs a subgraph,
whose checkpoints (namespace `inner:<task id>`) sit beside the thread's own. The threads' rows
interleave: `weather`'s second turn is written after the other two threads.
"""

from __future__ import annotations

import sqlite3
import sys

from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage, SystemMessage, ToolMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, MessagesState, StateGraph

PIXEL = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="


def agent(state: MessagesState) -> dict[str, object]:
    """Calls two tools on the first question, answers once the results are in."""
    last = state["messages"][-1]
    if isinstance(last, HumanMessage) and "Paris" in str(last.content):
        calls = [
            {"name": "get_weather", "args": {"city": "Paris"}, "id": "call_1"},
            {"name": "get_weather", "args": {"city": "Atlantis"}, "id": "call_2"},
        ]
        return {"messages": [AIMessage("Checking both.", id="ai-1", tool_calls=calls)]}
    if isinstance(last, ToolMessage):
        return {"messages": [AIMessage("Paris is sunny; Atlantis is not a city I know.", id="ai-2")]}
    return {"messages": [AIMessage("That is a red pixel.", id="ai-3")]}


def tools(state: MessagesState) -> dict[str, object]:
    """Answers the last AI message's calls: a city it knows, else an error."""
    calls = state["messages"][-1].tool_calls  # type: ignore[attr-defined]
    return {
        "messages": [
            ToolMessage("Sunny, 21°C", tool_call_id=c["id"], id=f"tool-{c['id']}")
            if c["args"]["city"] == "Paris"
            else ToolMessage("unknown city", tool_call_id=c["id"], status="error", id=f"tool-{c['id']}")
            for c in calls
        ]
    }


def trim(state: MessagesState) -> dict[str, object]:
    """Keeps the last two messages only."""
    return {"messages": [RemoveMessage(id=m.id) for m in state["messages"][:-2] if m.id]}


def echo(state: MessagesState) -> dict[str, object]:
    return {"messages": [AIMessage(f"echo: {state['messages'][-1].content}", id="inner-ai")]}


def main(out: str) -> None:
    react = StateGraph(MessagesState)
    react.add_node("agent", agent)
    react.add_node("tools", tools)
    react.add_edge(START, "agent")
    react.add_conditional_edges("agent", lambda s: "tools" if s["messages"][-1].tool_calls else END)
    react.add_edge("tools", "agent")
    trimming = StateGraph(MessagesState)
    trimming.add_node("agent", agent)
    trimming.add_node("trim", trim)
    trimming.add_edge(START, "agent")
    trimming.add_edge("agent", "trim")
    trimming.add_edge("trim", END)
    inner = StateGraph(MessagesState)
    inner.add_node("echo", echo)
    inner.add_edge(START, "echo")
    nested = StateGraph(MessagesState)
    nested.add_node("inner", inner.compile())
    nested.add_edge(START, "inner")
    connection = sqlite3.connect(out, check_same_thread=False)
    saver = SqliteSaver(connection)
    weather = {"configurable": {"thread_id": "weather"}}
    first = [
        SystemMessage("You answer briefly.", id="sys"),
        HumanMessage("Weather in Paris and Atlantis?", id="h-1"),
    ]
    react.compile(checkpointer=saver).invoke({"messages": first}, weather)
    said = [
        HumanMessage("Hello", id="t-1"),
        AIMessage("Hi", id="t-2"),
        HumanMessage("What is this?", id="t-3"),
    ]
    trimming.compile(checkpointer=saver).invoke(
        {"messages": said}, {"configurable": {"thread_id": "trimmed"}}
    )
    asked = HumanMessage("Echo me", id="n-1")
    nested.compile(checkpointer=saver).invoke(
        {"messages": [asked]}, {"configurable": {"thread_id": "nested"}}
    )
    image = [{"type": "text", "text": "And this?"}, {"type": "image_url", "image_url": {"url": PIXEL}}]
    react.compile(checkpointer=saver).invoke({"messages": [HumanMessage(image, id="h-2")]}, weather)
    connection.execute("PRAGMA journal_mode=DELETE")  # the WAL folded in: one file
    connection.close()


if __name__ == "__main__":
    main(sys.argv[1])
