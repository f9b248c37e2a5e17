"""The formats the importers read: each one's name, how it is recognised, how it is read (in
the order detection tries them)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import get_args

from ctxlab.workloads.importers import (
    agentscope,
    ai_sdk,
    anthropic,
    anthropic_history,
    autogen,
    claude_code,
    codex,
    converse,
    gemini_cli,
    google_adk,
    langgraph,
    letta,
    llamaindex,
    openai_agents,
    openai_chat,
    opencode,
    openhands,
    pydantic_ai,
    responses_log,
    swe_agent,
    tau2,
    tau_bench,
)
from ctxlab.workloads.importers.base import Entry, Reader
from ctxlab.workloads.importers.guard import OPENAI_CHAT
from ctxlab.workloads.trace import ImportFormat


@dataclass(frozen=True, slots=True, kw_only=True)
class Format:
    """An importable format: its name, how to recognise it, how to read it; `survey`, for a
    format whose reading depends on the whole file, reads its entries once first and gives the
    reader to use (`stream` calls it when the lines can be read again). `sessions`: a file may
    hold several conversations, the reader taking `Report.session`; else a session past 0 is
    refused before reading."""

    name: str
    detect: Callable[[list[object]], bool]
    read: Reader
    survey: Callable[[Iterator[Entry]], Reader] | None = None
    sessions: bool = False


def _first(test: Callable[[object], bool]) -> Callable[[list[object]], bool]:
    return lambda values: bool(values) and test(values[0])


FORMATS: dict[str, Format] = {
    f.name: f
    for f in (
        Format(
            name="codex",
            detect=codex.is_codex,
            read=codex.read_codex,
            survey=codex.survey,
        ),
        Format(
            name="claude-code",
            detect=claude_code.is_claude_code,
            read=claude_code.read_claude_code,
            survey=claude_code.survey,
        ),
        Format(
            name="gemini-cli",
            detect=gemini_cli.is_gemini_cli,
            read=gemini_cli.read_gemini_cli,
        ),
        Format(
            name="opencode",
            detect=opencode.is_opencode,
            read=opencode.read_opencode,
        ),
        Format(
            name="google-adk",
            detect=google_adk.is_google_adk,
            read=google_adk.read_google_adk,
        ),
        Format(
            name="openhands",
            detect=_first(lambda v: openhands.is_record(v) or openhands.is_event_stream(v)),
            read=openhands.read_openhands,
        ),
        Format(
            name="swe-agent",
            detect=_first(swe_agent.is_swe_agent),
            read=swe_agent.read_swe_agent,
            sessions=True,
        ),
        Format(
            name="mini-swe-agent",
            detect=_first(lambda v: swe_agent.mini_messages(v) is not None),
            read=swe_agent.read_mini,
            sessions=True,
        ),
        Format(
            name="langgraph",
            detect=_first(lambda v: langgraph.thread_messages(v) is not None),
            read=langgraph.read_langgraph,
            sessions=True,
        ),
        Format(
            name="tau-bench",
            detect=_first(lambda v: tau_bench.runs_of(v) is not None),
            read=tau_bench.read_tau_bench,
            sessions=True,
        ),
        Format(
            name="tau2",
            detect=_first(lambda v: tau2.is_results(v) or tau2.is_simulation(v)),
            read=tau2.read_tau2,
            sessions=True,
        ),
        Format(
            name="pydantic-ai",
            detect=pydantic_ai.is_pydantic_ai,
            read=pydantic_ai.read_pydantic_ai,
            survey=pydantic_ai.survey,
        ),
        Format(
            name="bedrock-converse",
            detect=converse.is_converse,
            read=converse.read_converse,
        ),
        Format(
            name="agentscope",
            detect=agentscope.is_agentscope,
            read=agentscope.read_agentscope,
        ),
        Format(
            name="autogen",
            detect=autogen.is_autogen,
            read=autogen.read_autogen,
            sessions=True,
        ),
        Format(
            name="letta",
            detect=letta.is_letta,
            read=letta.read_letta,
            sessions=True,
        ),
        Format(
            name="llamaindex",
            detect=llamaindex.is_llamaindex,
            read=llamaindex.read_llamaindex,
            sessions=True,  # a chat store's keys; its reader refuses a file of messages' past 0
        ),
        Format(
            name="ai-sdk",
            detect=ai_sdk.is_ai_sdk,
            read=ai_sdk.read_ai_sdk,
        ),
        Format(
            name="anthropic-messages",
            detect=anthropic.is_messages_log,
            read=anthropic.read_anthropic_log,
        ),
        Format(
            name="anthropic-history",
            detect=anthropic_history.is_history,
            read=anthropic_history.read_history,
            survey=anthropic_history.survey,
        ),
        Format(
            name="openai-responses",
            detect=responses_log.is_responses_log,
            read=responses_log.read_responses_log,
        ),
        Format(
            name="openai-agents",
            detect=openai_agents.is_agent_items,
            read=openai_agents.read_openai_agents,
        ),
        Format(
            name=OPENAI_CHAT,
            detect=openai_chat.is_openai_chat,
            read=openai_chat.read_openai_chat,
            sessions=True,  # fine-tuning files; its reader refuses the others' sessions past 0
        ),
    )
}


assert tuple(FORMATS) == get_args(ImportFormat)
