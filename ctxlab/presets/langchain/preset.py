"""The LangChain presets: `langchain-clear` (`ClearToolUsesEdit`) and `langchain-summary`
(`SummarizationMiddleware`), exact to langchain 1.5.0 (the steps are in
`ctxlab.presets.langchain.exact`, LangChain's counter, trim and transcript in
`ctxlab.presets.lc_messages`; both checked call for call against the installed package).

Both decide with LangChain's own counter over the messages (`request_counter`, recorded as
`strategy_tokens`), have no futile-compaction breaker, and carry LangGraph's loop limit instead
of the 50-round cap. Under `texts: langchain` they use the package's own prompt, summary prefix,
fixed texts and placeholder, read at run time (`ctxlab.texts.langchain`); otherwise the lab's
wording. LangChain ships no summarization trigger, so `langchain-summary` never summarizes until
one is set. A call's arguments are stored as LangChain parses them and every later request writes
them back (`lc_messages.lc_answer`, the strategy's `kept_answer`).

`langchain-clear` edits the outgoing request only, as `ContextEditingMiddleware` does; the
`persist` option (off) keeps the edit in the stored history, as PR #39265 does.

The lab's earlier free-text summary step is kept, shared, in `ctxlab.presets.freetext`.

Events: `cleared` (clearing), `compressed` (a summary replaced a span).
"""

from __future__ import annotations

from ctxlab.core.messages.latest import REQUESTS
from ctxlab.core.messages.message import Message
from ctxlab.core.messages.tools import ToolSchema
from ctxlab.presets.langchain.exact import (
    ClearExact,
    LangChainClearParams,
    LangChainSummaryParams,
    SummarizeExact,
)
from ctxlab.presets.lc_count import count_stored
from ctxlab.presets.lc_messages import lc_answer
from ctxlab.presets.preset import NO_SYSTEM_MESSAGE, Preset
from ctxlab.presets.steps import StepStrategy
from ctxlab.texts import Texts
from ctxlab.texts.langchain import CTXLAB_LANGCHAIN_TEXTS, LangChainTexts

__all__ = [
    "CLEAR_PRESET",
    "CLEAR_SOURCE",
    "LANGGRAPH_LOOP_LIMIT",
    "SUMMARY_PRESET",
    "SUMMARY_SOURCE",
    "LangChainClearParams",
    "LangChainSummaryParams",
    "build_clear",
    "build_summary",
    "counted_messages",
]

CLEAR_SOURCE = "langchain 1.5.0 agents/middleware/context_editing.py (ClearToolUsesEdit)"
SUMMARY_SOURCE = "langchain 1.5.0 agents/middleware/summarization.py (SummarizationMiddleware)"

LANGGRAPH_LOOP_LIMIT = 9_999
"""The recursion limit `create_agent` sets: LangGraph supersteps, not rounds, and it raises
rather than forcing an answer; as a round cap it is never reached by a workload."""


def counted_messages(messages: tuple[Message, ...], tools: tuple[ToolSchema, ...]) -> int:
    """LangChain's approximate count of a request's messages (the system prompt and tools are not
    counted), as both middlewares count them."""
    return count_stored(REQUESTS.rest(messages, 1) if messages and messages[0].role == "system" else messages)


def _langchain_texts(texts: Texts) -> LangChainTexts:
    """LangChain's own strings under `texts: langchain`, the lab's otherwise."""
    if texts.name == "langchain":
        from ctxlab.texts.langchain import langchain_texts

        return langchain_texts()
    return CTXLAB_LANGCHAIN_TEXTS


def build_clear(params: LangChainClearParams, texts: Texts) -> StepStrategy:
    """The `langchain-clear` strategy: `ClearToolUsesEdit` as installed (no breaker)."""
    step = ClearExact(params, texts=_langchain_texts(texts))
    return StepStrategy(
        name="langchain-clear",
        steps=(step,),
        config=params,
        source=CLEAR_SOURCE,
        futile_limit=0,
        kept_answer=lc_answer,
        request_counter=counted_messages,
    )


def build_summary(params: LangChainSummaryParams, texts: Texts) -> StepStrategy:
    """The `langchain-summary` strategy: `SummarizationMiddleware` as installed (no breaker)."""
    step = SummarizeExact(params, texts=_langchain_texts(texts))
    return StepStrategy(
        name="langchain-summary",
        steps=(step,),
        config=params,
        source=SUMMARY_SOURCE,
        futile_limit=0,
        kept_answer=lc_answer,
        request_counter=counted_messages,
    )


PEERS = ("langchain", "langchain-core")
"""The distributions the LangChain presets are proven against."""

NOTES = (
    "a model's thinking is neither sent, counted nor summarized, as an OpenAI-compatible chat model's "
    "reasoning_content kept in additional_kwargs; with anthropic: true, an Anthropic chat model's "
    "thinking blocks (kept in the content, sent back and counted) are not modelled",
    "a call's arguments are sent and counted as LangChain parses and writes them back (json.dumps, "
    "non-ASCII as is); arguments that are not JSON, which LangChain keeps as an invalid tool call and "
    "does not run, fail the run there, naming the call",
)
"""The declared deviations of both LangChain presets."""

CLEAR_PRESET = Preset(
    name="langchain-clear",
    summary="LangChain ClearToolUsesEdit: when the messages count over 100k tokens (LangChain's counter), "
    "all but the 3 newest tool results cleared in the outgoing request only",
    source=CLEAR_SOURCE,
    params=LangChainClearParams,
    build=build_clear,
    loop_limit=LANGGRAPH_LOOP_LIMIT,
    peers=PEERS,
    no_system=f'{NO_SYSTEM_MESSAGE} (create_agent with system_prompt=None; "" would send an empty one)',
    notes=NOTES,
)

SUMMARY_PRESET = Preset(
    name="langchain-summary",
    summary="LangChain SummarizationMiddleware: no trigger by default (set one); the span before the "
    "last 20 messages trimmed to 4000 tokens and summarized into a user message in the context",
    source=SUMMARY_SOURCE,
    params=LangChainSummaryParams,
    build=build_summary,
    loop_limit=LANGGRAPH_LOOP_LIMIT,
    peers=PEERS,
    no_system=f'{NO_SYSTEM_MESSAGE} (create_agent with system_prompt=None; "" would send an empty one)',
    notes=NOTES,
)
