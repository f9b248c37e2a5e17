"""The `nonoka` preset: microcompact, protocol-unit eviction with an evidence ledger inside budget
zones, an optional LLM summary behind a 3-failure breaker, and prompt-only trimming last.

Source: nonoka (github.com/fyerfyer/Nonoka-agent, `nonoka/core/memory.py` @ 73b4ea7:
`microcompact_superseded_tool_results` l.393, `_pop_protocol_unit` l.288, `_LEDGER_MAX_BYTES`
l.66, `WorkingMemory` defaults l.461–470 (8192 / 4096 / 2048), the breaker l.482 and l.593–607),
as the seed document (001) describes it, and the prompt-copy trimming it quotes
(`src/core/context.ts`: keep the summary and the last 2 messages, never edit the history).

Steps before each call:
1. microcompact (stored): superseded duplicate tool results become a placeholder in place
   (event `microcompacted`).
2. compaction (stored), when the request (system prompt, summary, ledger, context, tools) is
   strictly above `max_tokens − compaction_buffer_tokens` (6144): with `summarize`, the oldest
   ~⅓ of the chat (whole protocol units, never the latest user message) is summarized in one
   free-text call (events `compressed` or `summary_failed`; after 3 failures in a row the
   summarizer is off for the run, `summary_disabled`); then, if still above the target
   `max_tokens − reserve_output_tokens` (4096), the oldest protocol units are evicted until it
   fits (event `evicted`), each evicted result leaving an item in the evidence ledger (12 KB,
   oldest items dropped first, the whole ledger dropped if the request is still over the
   target: `ledger_dropped`).
3. the ledger (request): sent as a system message before the context.
4. prompt-only trimming (request): if the request is still above the model's window (or
   `max_tokens`, whichever is lower), whole protocol units are left out of this request from
   the front, never the last 2 messages, never the stored history (event `trimmed`).

With `checkpoint` (the seed's Isolate move, not nonoka's), each summary is written to the
workspace (`checkpoints/chk-NNNN.md`, its UTF-8 text byte for byte) and the summary sent is the
heading around `active_checkpoint: <path>` and a one-line preview (event `checkpointed`); the
next summary folds the checkpoint read back from the workspace in, and the agent can read it
with the `Read` tool.

Exit codes in the ledger come from the result state of shell tools (0 success, 1 error);
artifact refs from results that are artifact references (a JSON object with `artifact_id`).
Deviations: the summary is sent as a user message after the system prompt (ctxlab's invariant;
nonoka uses a system entry); the summarizer is off by default, as nonoka's `summary_llm` is.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, replace
from typing import ClassVar, NamedTuple

from ctxlab.core.agentscope.summary import summary_text
from ctxlab.core.compaction.budget import BudgetParams, PromptTrimParams, trim_prompt, zones
from ctxlab.core.compaction.checkpoint import CHECKPOINT_REFERENCE, reference
from ctxlab.core.compaction.evict import (
    Eviction,
    EvictParams,
    Ledger,
    ResultFacts,
    blocked_units,
    evict,
    ledger_items,
    render_ledger,
)
from ctxlab.core.compaction.freetext import summary_request
from ctxlab.core.compaction.microcompact import MicrocompactParams, microcompact
from ctxlab.core.compaction.progress import SUMMARY_FAILURE_LIMIT, Breaker
from ctxlab.core.events import EventKind
from ctxlab.core.messages.blocks import ZERO, ToolResultBlock
from ctxlab.core.messages.drops import drop_units
from ctxlab.core.messages.message import Message
from ctxlab.core.messages.templates import fill
from ctxlab.core.messages.tokens import measure_all
from ctxlab.core.messages.units import protocol_units, view_units
from ctxlab.core.settings import SettingError
from ctxlab.engine.env import Env
from ctxlab.engine.hooks import Frame
from ctxlab.engine.state import EpisodeState, memo, with_context, with_memo
from ctxlab.engine.workspace import Workspace
from ctxlab.presets.preset import UNSENT_THINKING, Preset
from ctxlab.presets.steps import (
    Compaction,
    Edit,
    Step,
    Stepped,
    StepStrategy,
    record_compaction,
    request_sizer,
    unit_keys,
)
from ctxlab.texts import Texts

SOURCE = "nonoka 73b4ea7, nonoka/core/memory.py (WorkingMemory, ProtocolAwareContextCompactor)"

SUMMARY_PROMPT = (
    "The oldest part of this conversation is about to leave the context. Write a history "
    "summary that replaces it: the user's goals and rules, what was done, what was found "
    "(exact paths, identifiers, numbers, errors) and what is still open. Fold the previous "
    "summary in; write only the summary.\n\n"
    "<previous_summary>\n{previous_summary}\n</previous_summary>\n\n"
    "<conversation>\n{conversation}\n</conversation>"
)


TEMPLATE_PLACEHOLDERS = (
    ("summary_prompt", "{conversation}", "the summarizer would never see the span it replaces"),
    ("summary_heading", "{summary}", "every summary would be dropped from the context"),
)
"""The placeholders a template cannot do without: each names the text the template carries."""


@dataclass(frozen=True, slots=True, kw_only=True)
class NonokaParams:
    """nonoka's settings (wordings are ctxlab's own).

    Attributes:
        budget: window, reserve for output, trigger buffer (8192 / 4096 / 2048).
        microcompact: which tools supersede their older results, and the placeholder.
        evict: the ledger's cap (12 KB), previews (800 / 360 characters), header and role.
        protected_ids: ids of stored messages never evicted (nonoka's `context_protected`).
        summarize: ask the summarizer before evicting (nonoka: only with a `summary_llm`).
        summary_share: the share of the chat the summary replaces (nonoka: the oldest ~⅓);
            above 0 and at most 1.
        summary_prompt: the summary request; `{previous_summary}`, `{conversation}`.
        summary_heading: the summary as sent; `{summary}`.
        summary_failure_limit: consecutive failures before the summarizer is off (3); 1 or
            more.
        trim: the prompt-only trimming: how many trailing messages always stay (2; 1 or more).
        checkpoint: write each summary to a workspace checkpoint and send only its reference and
            a one-line preview (ctxlab's Isolate move; off in nonoka).
        checkpoint_reference: what the summary heading holds instead of a checkpointed summary;
            `{path}`, `{preview}` (the reference line must stay `active_checkpoint: {path}`).
        checkpoint_preview_chars: the preview's length at most, in characters.
    """

    budget: BudgetParams = field(default_factory=BudgetParams)
    microcompact: MicrocompactParams = field(default_factory=MicrocompactParams)
    evict: EvictParams = field(default_factory=EvictParams)
    protected_ids: tuple[str, ...] = ()
    summarize: bool = False
    summary_share: float = 1 / 3
    summary_prompt: str = SUMMARY_PROMPT
    summary_heading: str = "[History summary]\n{summary}"
    summary_failure_limit: int = SUMMARY_FAILURE_LIMIT
    trim: PromptTrimParams = field(default_factory=PromptTrimParams)
    checkpoint: bool = False
    checkpoint_reference: str = CHECKPOINT_REFERENCE
    checkpoint_preview_chars: int = 160
    __late_fields__: ClassVar[tuple[str, ...]] = (
        "checkpoint",
        "checkpoint_reference",
        "checkpoint_preview_chars",
    )

    def __post_init__(self) -> None:
        if not 0 < self.summary_share <= 1:
            raise SettingError(
                ("summary_share",),
                f"summary_share={self.summary_share}: a share of the chat is above 0 and at most 1 "
                "(nonoka summarizes the oldest third: 0.333); to never summarize, set summarize: false",
            )
        if self.summary_failure_limit < 1:
            raise SettingError(
                ("summary_failure_limit",),
                f"summary_failure_limit={self.summary_failure_limit}: the summarizer is turned off "
                "after this many failures in a row, so it is 1 or more (nonoka: 3); to never "
                "summarize, set summarize: false",
            )
        if self.checkpoint_preview_chars < 1:
            raise SettingError(("checkpoint_preview_chars",), "checkpoint_preview_chars must be at least 1")
        if self.trim.keep_last < 1:
            raise SettingError(
                ("trim", "keep_last"),
                f"keep_last={self.trim.keep_last}: trimming could then leave out every message, the "
                "latest one too, and send a request with no turn, which Anthropic refuses; use 1 or "
                "more (nonoka's seed keeps 2)",
            )
        for name, placeholder, lost in TEMPLATE_PLACEHOLDERS:
            if placeholder not in getattr(self, name):
                raise SettingError(
                    (name,),
                    f"{name} lacks the '{placeholder}' placeholder, so {lost}; add '{placeholder}' "
                    "where it goes",
                )
        if "active_checkpoint: {path}" not in self.checkpoint_reference:
            raise SettingError(
                ("checkpoint_reference",),
                "checkpoint_reference must hold the line 'active_checkpoint: {path}'",
            )

    def needs_workspace(self) -> str | None:
        """Why a run of these settings writes to its workspace whatever the entry's `workspace`
        says (a checkpointed summary), or None."""
        if self.summarize and self.checkpoint:
            return (
                "checkpoint: true writes each summary to the workspace (checkpoint: false keeps it in "
                "the context)"
            )
        return None


@dataclass(frozen=True, slots=True, kw_only=True)
class NonokaMemo:
    """What nonoka keeps beside the context: the ledger (and its rendered message), the
    summary breaker, and the path of the checkpoint in force."""

    ledger: Ledger = field(default_factory=Ledger)
    message: Message | None = None
    summaries: Breaker = field(default_factory=lambda: Breaker(limit=SUMMARY_FAILURE_LIMIT))
    checkpoint: str | None = None


@dataclass(frozen=True, slots=True)
class Microcompact(Step):
    """Superseded duplicate tool results become a placeholder, in the stored history."""

    params: MicrocompactParams
    key: ClassVar[str] = "microcompact"

    def compress(self, state: EpisodeState, env: Env, frame: Frame) -> Stepped:
        """Replace superseded results (event `microcompacted`)."""
        done = microcompact(state.context, self.params)
        if not done.superseded:
            return Stepped(state=state)
        env.recorder.event(EventKind.MICROCOMPACTED)
        return Stepped(state=with_context(state, done.messages, env.counter))


def result_facts(messages: tuple[Message, ...], shell_tools: tuple[str, ...]) -> dict[str, ResultFacts]:
    """Exit codes of shell results and artifact refs of artifact-reference results, by call id."""
    facts: dict[str, ResultFacts] = {}
    for message in messages:
        for block in message.blocks:
            if isinstance(block, ToolResultBlock):
                exit_code = (
                    (1 if block.state == "error" else 0) if block.name.lower() in shell_tools else None
                )
                ref = artifact_id(block.text)
                if exit_code is not None or ref is not None:
                    facts[block.id] = ResultFacts(artifact_ref=ref, exit_code=exit_code)
    return facts


def artifact_id(text: str) -> str | None:
    """The `artifact_id` of a result that is an artifact reference, else None.

    >>> artifact_id('{"artifact_id": "art-0001", "size": 10}'), artifact_id("plain text")
    ('art-0001', None)
    """
    if not text.startswith("{"):
        return None
    try:
        loaded = json.loads(text)
    except json.JSONDecodeError:
        return None
    found = loaded.get("artifact_id") if isinstance(loaded, dict) else None
    return found if isinstance(found, str) else None


class Evicted(NamedTuple):
    """The state after eviction, nonoka's memo, the request's tokens, its floor, units evicted."""

    state: EpisodeState
    memo: NonokaMemo
    tokens: int
    floor: int
    units: int


class Summarized(NamedTuple):
    """The state after a summary attempt, whether one was made and succeeded, and the path of
    the checkpoint it wrote."""

    state: EpisodeState
    attempted: bool
    ok: bool
    checkpoint: str | None = None


@dataclass(frozen=True, slots=True)
class Compact(Step):
    """nonoka's compaction within the budget zones, and its ledger in each request."""

    params: NonokaParams
    key: ClassVar[str] = "nonoka"
    edits: ClassVar[bool] = True
    stoppable: ClassVar[bool] = True

    def compress(self, state: EpisodeState, env: Env, frame: Frame) -> Stepped:
        """Summary (optional) then eviction when the request is over the trigger."""
        p = self.params
        trigger = zones(p.budget).trigger
        kept = memo(state, self.key, NonokaMemo(summaries=Breaker(limit=p.summary_failure_limit)))
        ledger_size = ZERO if kept.message is None else env.counter.measure_message(kept.message)
        before = request_sizer(state, env, frame).tokens(state.context_tally + ledger_size)
        if before <= trigger:
            return Stepped(state=state)
        summaries = kept.summaries
        summarized = Summarized(state=state, attempted=False, ok=False)
        if p.summarize and not summaries.tripped:
            summarized = self._summarize(state, env, kept.checkpoint)
            summaries = summaries.record(summarized.ok) if summarized.attempted else summaries
            if summaries.tripped and not kept.summaries.tripped:
                env.recorder.event(EventKind.SUMMARY_DISABLED)
        evicted = self._evict(summarized.state, env, frame, kept)
        checkpoint = summarized.checkpoint or kept.checkpoint
        new = with_memo(
            evicted.state, self.key, replace(evicted.memo, summaries=summaries, checkpoint=checkpoint)
        )
        record_compaction(
            env,
            before=before,
            after=evicted.tokens,
            threshold=trigger,
            compressed=evicted.units,
            kept=len(new.context),
            summary_ok=summarized.ok,
            summary=new.summary,
            floor=evicted.floor,
        )
        done = Compaction(before=before, after=evicted.tokens, floor=evicted.floor, trigger=trigger + 1)
        return Stepped(state=new, compaction=done)

    def _evict(self, state: EpisodeState, env: Env, frame: Frame, kept: NonokaMemo) -> Evicted:
        """The deterministic compactor: oldest protocol units out, the ledger updated."""
        p = self.params
        sizer = request_sizer(state, env, frame)
        protected = frozenset(p.protected_ids)
        facts = result_facts(state.context, p.microcompact.shell_tools)
        target = zones(p.budget).target
        done = evict(
            state.context,
            target=target,
            sizer=sizer,
            ledger=kept.ledger,
            facts=facts,
            protected=protected,
            params=p.evict,
        )
        floor = evict(state.context, target=0, sizer=sizer, protected=protected, params=p.evict).tokens_after
        if done.evicted:
            env.recorder.event(EventKind.EVICTED)
        if not done.ledger.items and (kept.ledger.items or self._leaves_items(state, done, facts)):
            env.recorder.event(EventKind.LEDGER_DROPPED)
        message = kept.message if done.ledger == kept.ledger else render_ledger(done.ledger, p.evict)
        return Evicted(
            state=with_context(state, done.messages, env.counter),
            memo=replace(kept, ledger=done.ledger, message=message),
            tokens=done.tokens_after,
            floor=floor,
            units=len(done.evicted),
        )

    def _leaves_items(self, state: EpisodeState, done: Eviction, facts: dict[str, ResultFacts]) -> bool:
        """Whether the evicted units would have left ledger items (results or user messages)."""
        units = view_units(state.context)
        return bool(ledger_items(state.context, [units[i] for i in done.evicted], facts, self.params.evict))

    def _summarize(self, state: EpisodeState, env: Env, checkpoint: str | None) -> Summarized:
        """The oldest ~⅓ of the chat (whole evictable protocol units) replaced by a summary (its
        checkpoint's reference with `checkpoint`; the one in force is `checkpoint`)."""
        p = self.params
        units = view_units(state.context)
        blocked = blocked_units(state.context, units, frozenset(p.protected_ids), p.evict)
        need = math.ceil(sum(1 for u in units if u.kind != "system") * p.summary_share)
        chosen: list[int] = []
        for group in protocol_units(units):
            if len(chosen) >= need:
                break
            if group.complete and not blocked.intersection(group.units):
                chosen.extend(group.units)
        if not chosen:
            return Summarized(state=state, attempted=False, ok=False)
        picked = set(chosen)
        span = drop_units(state.context, units, [u.index for u in units if u.index not in picked])
        previous = summary_text(state.summary)
        if checkpoint is not None:
            previous = workspace_of(env).read(checkpoint).decode("utf-8")
        request = summary_request(p.summary_prompt, span, previous_summary=previous)
        outcome = env.summarize_text(state, request)
        if outcome.text is None:
            env.recorder.event(EventKind.SUMMARY_FAILED)
            return Summarized(state=state, attempted=not outcome.skipped, ok=False)
        env.recorder.event(EventKind.COMPRESSED)
        rest = drop_units(state.context, units, chosen)
        written, kept = None, outcome.text
        if p.checkpoint:
            written = workspace_of(env).offload_summary(outcome.text)
            kept = reference(p.checkpoint_reference, written, outcome.text, p.checkpoint_preview_chars)
            env.recorder.event(EventKind.CHECKPOINTED)
        summary = fill(p.summary_heading, summary=kept)
        new = replace(with_context(state, rest, env.counter), summary=summary)
        return Summarized(state=new, attempted=True, ok=True, checkpoint=written)

    def edit(self, messages: tuple[Message, ...], state: EpisodeState, env: Env, frame: Frame) -> Edit:
        """The ledger, as a message before the context."""
        message = memo(state, self.key, NonokaMemo()).message
        return Edit(messages=messages if message is None else (message, *messages))

    def ledger_text(self, state: EpisodeState) -> str:
        """The ledger as sent ('' when empty)."""
        kept = memo(state, self.key, NonokaMemo())
        return kept.ledger.text(self.params.evict) if kept.ledger.items else ""


@dataclass(frozen=True, slots=True)
class TrimPrompt(Step):
    """The last safety net: a copy of the request trimmed to the window, history untouched."""

    params: NonokaParams
    key: ClassVar[str] = "prompt_trim"
    event: ClassVar[EventKind] = EventKind.TRIMMED
    edits: ClassVar[bool] = True

    def edit(self, messages: tuple[Message, ...], state: EpisodeState, env: Env, frame: Frame) -> Edit:
        """Whole protocol units left out from the front while the request is over the window."""
        limit = min(self.params.budget.max_tokens, env.context_size)
        sizer = request_sizer(state, env, frame)
        if sizer.tokens(measure_all(env.counter, messages)) <= limit:
            return Edit(messages=messages)
        trimmed = trim_prompt(messages, limit=limit, sizer=sizer, params=self.params.trim)
        if not trimmed.dropped:
            return Edit(messages=messages)
        return Edit(messages=trimmed.messages, cleared=unit_keys(messages, trimmed.dropped))


def workspace_of(env: Env) -> Workspace:
    """The run's workspace, where checkpoints live.

    Raises:
        ValueError: the run has none (`workspace: none`).
    """
    if env.workspace is None:
        raise ValueError(
            "nonoka's checkpoint needs a workspace; set the entry's workspace to memory or directory"
        )
    return env.workspace


def build(params: NonokaParams, texts: Texts) -> StepStrategy:
    """The `nonoka` strategy."""
    steps = (Microcompact(params.microcompact), Compact(params), TrimPrompt(params))
    return StepStrategy(name="nonoka", steps=steps, config=params, source=SOURCE)


PRESET = Preset(
    name="nonoka",
    summary="nonoka: microcompact, then protocol-unit eviction with a 12 KB evidence ledger above "
    "6144 of 8192 tokens down to 4096, optional summary with a 3-failure breaker, prompt-only trimming",
    source=SOURCE,
    params=NonokaParams,
    build=build,
    assistant_first="evicting the oldest protocol units may leave an assistant turn first",
    notes=(
        "settings nonoka fixes as constants take ranges here (budget as its RuntimeLimits; "
        "evict, microcompact, trim and summary values that cannot mean anything are refused at "
        "load, where nonoka's WorkingMemory built by hand would take them: declared as N1-N3)",
        UNSENT_THINKING,
    ),
)
