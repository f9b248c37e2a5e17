"""The LangChain presets: `langchain-clear` (`ClearToolUsesEdit`) and `langchain-summary`
(`SummarizationMiddleware`).

Sources: langchain v1 `libs/langchain_v1/langchain/agents/middleware/context_editing.py` and
`summarization.py`; reference docs reference.langchain.com `ClearToolUsesEdit` (trigger 100,000,
clear_at_least 0, keep 3, clear_tool_inputs False, exclude_tools ()) and
`SummarizationMiddleware` (trigger None, keep `("messages", 20)`, trim_tokens_to_summarize
4000); the safe cutoff of PR #34609; langchain #37815 (request-only edits re-run every turn).

`langchain-clear` edits the outgoing request only, as `ContextEditingMiddleware` does
(`persist=False`); `persist=True` keeps the edit in the stored history, as PR #39265 does.

`langchain-summary`: when a trigger holds, everything before the kept tail (moved back so no
call loses its results) is summarized in one free-text call and replaced by the summary, sent
as a user message that opens with "Summary of the conversation to date". The span is first
trimmed to its last `trim_tokens_to_summarize` tokens (whole protocol units). The previous
summary is summarized with the span, as LangChain summarizes its earlier summary message.
Quirk kept (the inspected version): a failed summary call does not stop the cut; the summary
becomes an error notice and the span is gone (`keep_on_failure=True` keeps the context instead).

Deviation: LangChain ships no default trigger (it never summarizes until one is set); the
preset uses `("fraction", 0.85)`, as deepagents configures this middleware when the model's
window is known. The summary travels beside the context (ctxlab's invariant), so message counts
do not include it.

Events: `cleared` (clearing), `compressed` (a summary replaced a span), `summary_failed`,
`offloaded` (the span saved to the workspace, deepagents).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from typing import ClassVar, NamedTuple

from ctxlab.core.compaction.budget import PromptTrimParams, trim_prompt
from ctxlab.core.compaction.clearing import Clearing, LangChainClearParams, clear_tool_results
from ctxlab.core.compaction.cutoff import LANGCHAIN_KEEP, ContextSize, SummaryParams, langchain_cut
from ctxlab.core.compaction.freetext import summary_request
from ctxlab.core.events import EventKind
from ctxlab.core.messages.message import Message, summary_message
from ctxlab.core.messages.templates import fill
from ctxlab.core.messages.units import Sizer
from ctxlab.engine.env import Env
from ctxlab.engine.hooks import Frame
from ctxlab.engine.state import EpisodeState, with_context
from ctxlab.presets.preset import Preset
from ctxlab.presets.steps import (
    Compaction,
    PersistableClearing,
    Step,
    Stepped,
    StepStrategy,
    record_compaction,
    request_sizer,
)
from ctxlab.texts import Texts

CLEAR_SOURCE = "langchain v1 agents/middleware/context_editing.py (ClearToolUsesEdit)"
SUMMARY_SOURCE = "langchain v1 agents/middleware/summarization.py (SummarizationMiddleware), PR #34609"

SUMMARY_PROMPT = (
    "You are handing this conversation over to yourself. Read it and write the notes you need "
    "to carry on the work once these messages are gone: the goal and every constraint the user "
    "set, what was done and found (exact file paths, identifiers, commands, numbers and error "
    "messages), what is still open, and what to do next. Write only the notes.\n\n"
    "<conversation>\n{conversation}\n</conversation>"
)


@dataclass(frozen=True, slots=True)
class ClearToolResults(PersistableClearing):
    """LangChain's `ClearToolUsesEdit`: request-only by default (every request is edited anew,
    langchain #37815), stored with `persist`."""

    params: LangChainClearParams
    key: ClassVar[str] = "clear_tool_results"

    @property
    def persist(self) -> bool:
        """Whether the edit is kept in the stored history."""
        return self.params.persist

    @property
    def trigger(self) -> int:
        """The request size the edit waits for."""
        return self.params.trigger

    def clear(self, messages: tuple[Message, ...], sizer: Sizer) -> Clearing:
        """`clear_tool_results` with this step's parameters."""
        return clear_tool_results(messages, sizer=sizer, params=self.params)


@dataclass(frozen=True, slots=True, kw_only=True)
class LangChainSummaryParams:
    """`SummarizationMiddleware` settings (wordings are ctxlab's own).

    Attributes:
        trigger: summarize when any condition holds (`>=`); LangChain has none by default.
        keep: the tail kept verbatim (LangChain: the last 20 messages).
        trim_tokens_to_summarize: the span sent to the summarizer is cut to its last this many
            tokens, whole protocol units (LangChain: 4000; None: send it all).
        prompt: the summary request; `{conversation}` is the span as text.
        summary_prefix: the summary message; `{summary}` is the summarizer's text.
        failure_text: the summary after a failed call; `{error}` says why.
        keep_on_failure: keep the context when the summary fails (LangChain: False).
        offload_history: save the summarized span to the workspace and name it in the summary
            (deepagents; LangChain: False).
        history_reminder: appended to the summary when the span is saved; `{path}`.
    """

    trigger: tuple[ContextSize, ...] = (ContextSize("fraction", 0.85),)
    keep: ContextSize = LANGCHAIN_KEEP
    trim_tokens_to_summarize: int | None = 4000
    prompt: str = SUMMARY_PROMPT
    summary_prefix: str = "Summary of the conversation to date:\n\n{summary}"
    failure_text: str = "(No summary is available: the summary request failed: {error}.)"
    keep_on_failure: bool = False
    offload_history: bool = False
    history_reminder: str = (
        "\n\nThe full conversation before this summary is saved at '{path}'; read it there when "
        "you need a detail the summary lacks."
    )


def token_trigger(trigger: tuple[ContextSize, ...], context_size: int) -> int:
    """The lowest token count at which a trigger holds (no token trigger: never).

    >>> token_trigger((ContextSize("messages", 50), ContextSize("fraction", 0.5)), 1000)
    500
    """
    tokens = [
        int(value) if kind == "tokens" else int(context_size * value)
        for kind, value in trigger
        if kind != "messages"
    ]
    return min(tokens, default=sys.maxsize)


class Written(NamedTuple):
    """The summary text a compaction installs, and whether the summarizer wrote it."""

    text: str
    ok: bool


@dataclass(frozen=True, slots=True)
class SummarizeOldest(Step):
    """LangChain's summarization step (see the module docstring)."""

    params: LangChainSummaryParams
    key: ClassVar[str] = "summarization"
    stoppable: ClassVar[bool] = True

    def compress(self, state: EpisodeState, env: Env, frame: Frame) -> Stepped:
        """Summarize the span before the kept tail when a trigger holds."""
        p = self.params
        sizer = request_sizer(state, env, frame)
        cut = langchain_cut(
            state.context,
            sizer=sizer,
            params=SummaryParams(trigger=p.trigger, keep=p.keep),
            context_size=env.context_size,
        )
        if cut is None:
            return Stepped(state=state)
        before = sizer.tokens(state.context_tally)
        trigger = token_trigger(p.trigger, env.context_size)
        written = self._summary_text(state, cut.summarize, env)
        if written is None:
            return Stepped(
                state=state, compaction=Compaction(before=before, after=before, floor=0, trigger=trigger)
            )
        text, path = written.text, None
        if p.offload_history and env.workspace is not None:
            path = env.workspace.offload_context(cut.summarize)
            text += fill(p.history_reminder, path=path)
            env.recorder.event(EventKind.OFFLOADED)
        new = replace(with_context(state, cut.keep, env.counter), summary=text)
        after = request_sizer(new, env, frame).tokens(new.context_tally)
        env.recorder.event(EventKind.COMPRESSED)
        record_compaction(
            env,
            before=before,
            after=after,
            threshold=trigger,
            compressed=len(cut.summarize),
            kept=len(cut.keep),
            summary_ok=written.ok,
            summary=text,
            offload_path=path,
            floor=after,
        )
        return Stepped(
            state=new, compaction=Compaction(before=before, after=after, floor=after, trigger=trigger)
        )

    def _summary_text(self, state: EpisodeState, span: tuple[Message, ...], env: Env) -> Written | None:
        """The summary message's text (or the failure notice), or None to keep the context."""
        p = self.params
        shown = span
        if p.trim_tokens_to_summarize is not None:
            trimmed = trim_prompt(
                span,
                limit=p.trim_tokens_to_summarize,
                sizer=Sizer(counter=env.counter),
                params=PromptTrimParams(keep_last=0),
            )
            shown = trimmed.messages
        carried = summary_message(state.summary)
        request = summary_request(p.prompt, (carried, *shown) if carried else shown)
        outcome = env.summarize_text(state, request)
        if outcome.text is not None:
            return Written(fill(p.summary_prefix, summary=outcome.text), ok=True)
        env.recorder.event(EventKind.SUMMARY_FAILED)
        if p.keep_on_failure:
            return None
        why = "skipped after repeated failures" if outcome.skipped else str(outcome.error)
        return Written(fill(p.summary_prefix, summary=fill(p.failure_text, error=why)), ok=False)


def build_clear(params: LangChainClearParams, texts: Texts) -> StepStrategy:
    """The `langchain-clear` strategy."""
    return StepStrategy(
        name="langchain-clear", steps=(ClearToolResults(params),), config=params, source=CLEAR_SOURCE
    )


def build_summary(params: LangChainSummaryParams, texts: Texts) -> StepStrategy:
    """The `langchain-summary` strategy."""
    return StepStrategy(
        name="langchain-summary", steps=(SummarizeOldest(params),), config=params, source=SUMMARY_SOURCE
    )


CLEAR_PRESET = Preset(
    name="langchain-clear",
    summary="LangChain ClearToolUsesEdit: past 100k tokens, all but the 3 newest tool results cleared "
    "in the outgoing request only",
    source=CLEAR_SOURCE,
    params=LangChainClearParams,
    build=build_clear,
)

SUMMARY_PRESET = Preset(
    name="langchain-summary",
    summary="LangChain SummarizationMiddleware: at 0.85 of the window, all but the last 20 messages "
    "replaced by a free-text summary, with a safe cutoff",
    source=SUMMARY_SOURCE,
    params=LangChainSummaryParams,
    build=build_summary,
)
