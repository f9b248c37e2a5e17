"""The free-text summary step the families share: the oldest span summarized beside the context.

The lab's earlier model of LangChain's `SummarizationMiddleware` (langchain v1, the safe cutoff of
PR #34609), kept as a step of its own now that the `langchain-summary` preset runs LangChain 1.5.0
exactly (`ctxlab.presets.langchain.exact`) and the `deepagents` preset runs deepagents' own; the
step framework's tests compose it with other steps.

When a trigger holds, everything before the kept tail (moved back so no call loses its results)
is summarized in one free-text call and replaced by the summary, which travels beside the
context (ctxlab's invariant: message counts do not include it) and opens with "Summary of the
conversation to date". The span is first trimmed to its last `trim_tokens_to_summarize` tokens
(whole protocol units). The previous summary is summarized with the span. A failed summary call
does not stop the cut: the summary becomes an error notice and the span is gone
(`keep_on_failure=True` keeps the context instead). With `offload_history` the summarized span
is saved to the workspace and named in the summary (deepagents).

Events: `compressed` (a summary replaced a span), `summary_failed`, `offloaded` (the span saved).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from typing import ClassVar, NamedTuple

from ctxlab.core.compaction.budget import PromptTrimParams, trim_prompt
from ctxlab.core.compaction.cutoff import LANGCHAIN_KEEP, ContextSize, SummaryParams, langchain_cut
from ctxlab.core.compaction.freetext import summary_request
from ctxlab.core.events import EventKind
from ctxlab.core.messages.message import Message, summary_message
from ctxlab.core.messages.sizes import (
    Sizer,
)
from ctxlab.core.messages.templates import fill
from ctxlab.engine.env import Env
from ctxlab.engine.hooks import Frame
from ctxlab.engine.state import EpisodeState, with_context
from ctxlab.presets.steps import Compaction, Step, Stepped, record_compaction, request_sizer

SUMMARY_PROMPT = (
    "You are handing this conversation over to yourself. Read it and write the notes you need "
    "to carry on the work once these messages are gone: the goal and every constraint the user "
    "set, what was done and found (exact file paths, identifiers, commands, numbers and error "
    "messages), what is still open, and what to do next. Write only the notes.\n\n"
    "<conversation>\n{conversation}\n</conversation>"
)


@dataclass(frozen=True, slots=True, kw_only=True)
class FreeTextSummaryParams:
    """The free-text summary step's settings (wordings are ctxlab's own).

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
    """The free-text summary step (see the module docstring)."""

    params: FreeTextSummaryParams
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
