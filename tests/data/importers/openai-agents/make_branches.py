"""Writes `branches.sqlite` (see NOTICE.md): run with openai-agents 0.24.0, offline.

    python make_branches.py OUT.sqlite

Session `trip-3` is an `AdvancedSQLiteSession`: three turns on `main` (weather calls, a train
booked), a branch `ferry` made from turn 2 (turn 1 copied) with a turn of its own, a branch
`empty` made from turn 1 (nothing copied, no item ever added), then back on `main` a fourth
turn. Session `visitor-9` is a plain `SQLiteSession` on the same file (rows with no
`message_structure` entry). Tracing is off and the model is the SDK's `ScriptedModel`.
"""

from __future__ import annotations

import asyncio
import sys

from agents import Agent, RunConfig, Runner, SQLiteSession, function_tool
from agents.extensions.memory import AdvancedSQLiteSession
from agents.testing import ScriptedModel, assistant_message, function_call


@function_tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return {"Oslo": "4 C, rain", "Bergen": "6 C, wind"}.get(city, "unknown")


@function_tool
def book_train(to: str) -> str:
    """Books a train ticket."""
    return f"booked: Oslo-{to}, seat 42"


@function_tool
def ferry_times(to: str) -> str:
    """The ferry departures to a port."""
    return f"{to}: 08:00, 14:30"


def _model() -> ScriptedModel:
    return ScriptedModel(
        [
            [function_call("get_weather", {"city": "Oslo"}, call_id="call-1")],
            [assistant_message("Oslo: 4 C and rain.")],
            [function_call("get_weather", {"city": "Bergen"}, call_id="call-2")],
            [assistant_message("Bergen: 6 C and windy.")],
            [function_call("book_train", {"to": "Bergen"}, call_id="call-3")],
            [assistant_message("Your train to Bergen is booked, seat 42.")],
            [function_call("ferry_times", {"to": "Bergen"}, call_id="call-4")],
            [assistant_message("Ferries to Bergen leave at 08:00 and 14:30.")],
            [assistant_message("The booking stays; have a good trip.")],
            [function_call("get_weather", {"city": "Paris"}, call_id="call-5")],
            [assistant_message("No weather for Paris.")],
        ]
    )


async def main(path: str) -> None:
    agent = Agent(name="travel", instructions="Help with travel.", model=_model(),
                  tools=[get_weather, book_train, ferry_times])
    config = RunConfig(tracing_disabled=True)
    trip = AdvancedSQLiteSession(session_id="trip-3", db_path=path, create_tables=True)

    async def turn(session: SQLiteSession, text: str) -> None:
        result = await Runner.run(agent, text, session=session, run_config=config)
        if isinstance(session, AdvancedSQLiteSession):
            await session.store_run_usage(result)

    await turn(trip, "Weather in Oslo?")
    await turn(trip, "And in Bergen?")
    await turn(trip, "Book a train to Bergen.")
    await trip.create_branch_from_turn(2, "ferry")
    await turn(trip, "Is there a ferry to Bergen?")
    await trip.create_branch_from_turn(1, "empty")
    await trip.switch_to_branch("main")
    await turn(trip, "Thanks, that is all.")
    trip.close()
    visitor = SQLiteSession(session_id="visitor-9", db_path=path)
    await turn(visitor, "Weather in Paris?")
    visitor.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
