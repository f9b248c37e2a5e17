"""The OpenAI Agents SDK presets, exact to openai-agents 0.24.0 (checked call for call against the
installed package, `tests/parity/test_openai_agents_parity.py`):

- `openai-agents-trimmer`: `ToolOutputTrimmer` as `RunConfig.call_model_input_filter` (its
  settings at the top, as the class names them), on a session whose `session_settings.limit` is
  None unless set. Old tool outputs over 500 characters become a notice with a 200-character
  preview in the request only (one holding images or files, the SDK's structured output, its own
  headers, its images and files dropped: `structured.py`); the last 2 user turns stay whole.
- `openai-agents-session`: a session with `SessionSettings(limit=...)` and no filter. With the
  SDK's default (None) the whole history is sent: set a limit for it to do anything.

The edits are request-only and run in the SDK's order: the session's history first, then the
filter on the model input, then the chat-completions model's conversion of tool outputs holding
images (their text parts alone, `chat.py`). None has a breaker or a token counter of its own (the
SDK counts items and characters). Under `texts: openai-agents` the notices (a structured
output's headers too) and the text sent for an output without text are the package's own, read
at run time (`ctxlab.texts.agents`); otherwise the lab's wording.

Out of reach offline: `OpenAIResponsesCompactionSession`, the session that compacts through the
Responses API's server-side `compact` endpoint; the lab has no server to run it.

Events: `dropped` (the limit newly leaves out stored items), `cleared` (outputs newly trimmed).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from ctxlab.core.events import EventKind
from ctxlab.core.messages.message import Message
from ctxlab.engine.env import Env
from ctxlab.engine.hooks import Frame
from ctxlab.engine.state import EpisodeState
from ctxlab.presets.openai_agents.chat import ChatCompletionsOutputs
from ctxlab.presets.openai_agents.session import SessionSettings, limit_history
from ctxlab.presets.openai_agents.trimmer import ToolOutputTrimmerParams, TrimNotice, trim_tool_outputs
from ctxlab.presets.preset import Preset
from ctxlab.presets.steps import Edit, Step, StepStrategy
from ctxlab.texts import Texts
from ctxlab.texts.agents import CTXLAB_OPENAI_AGENTS_TEXTS, OpenAIAgentsTexts

VERSION = "openai-agents 0.24.0"
TRIMMER_SOURCE = f"{VERSION} agents/extensions/tool_output_trimmer.py (ToolOutputTrimmer)"
SESSION_SOURCE = (
    f"{VERSION} run_internal/session_persistence.py (prepare_input_with_session), "
    "memory/sqlite_session.py (SessionSettings.limit)"
)
NOTES = (
    "out of reach: OpenAIResponsesCompactionSession (server-side compaction through the Responses "
    "API) cannot run offline",
    "deviation: the SDK's max_turns (10, raising MaxTurnsExceeded) is not applied; the scenario's "
    "react.max_iters limits a reply",
    "deviation: requests follow a model not named DeepSeek, which is sent no reasoning (a round's "
    "thinking is still a stored reasoning item the session limit counts); to a DeepSeek model the "
    "SDK sends each reasoning item back as the next assistant message's reasoning_content",
    "a tool output holding images is sent as the SDK's chat-completions model sends it: its text parts "
    "alone, as a list of text parts, or the SDK's placeholder text when it has none; its images are "
    "neither sent nor counted. Deviation: a user's image is sent without detail, which the SDK writes "
    "as auto, the API's default (OA21)",
    "a tool output holding images or files is the SDK's structured output (its texts, images as input_image, "
    "other data as input_file), trimmed as ToolOutputTrimmer trims one: over max_output_chars characters "
    "of payload it becomes the most detailed header that fits within max_output_chars with a preview of its "
    "texts, its images and files dropped. Deviation: no tool_search_output or namespaced tool, as the lab "
    "has neither",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class TrimmerParams:
    """`ToolOutputTrimmer`'s settings (the SDK's names and defaults) and the session's.

    Attributes:
        recent_turns: the last this many user messages, and everything after the earliest of
            them, are never trimmed (2; at least 1).
        max_output_chars: older outputs longer than this many characters are trimmed (500).
        preview_chars: characters of the output kept in the notice (200).
        trimmable_tools: only these tools' outputs are trimmed (None: every tool's).
        session_settings: the session the run uses (`limit` None: the whole history).
    """

    recent_turns: int = 2
    max_output_chars: int = 500
    preview_chars: int = 200
    trimmable_tools: tuple[str, ...] | None = None
    session_settings: SessionSettings = field(default_factory=SessionSettings)

    def __post_init__(self) -> None:
        self.trimmer()

    def trimmer(self) -> ToolOutputTrimmerParams:
        """The trimmer's own settings (checked as the SDK checks them)."""
        return ToolOutputTrimmerParams(
            recent_turns=self.recent_turns,
            max_output_chars=self.max_output_chars,
            preview_chars=self.preview_chars,
            trimmable_tools=self.trimmable_tools,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionParams:
    """The session's settings.

    Attributes:
        session_settings: `SessionSettings` (`limit` None, the SDK's default: the whole history).
    """

    session_settings: SessionSettings = field(default_factory=SessionSettings)


@dataclass(frozen=True, slots=True)
class SessionLimit(Step):
    """The session's history read back under its `limit` (request-only: the session keeps all)."""

    settings: SessionSettings
    key: ClassVar[str] = "session"
    event: ClassVar[EventKind] = EventKind.DROPPED
    edits: ClassVar[bool] = True

    def edit(self, messages: tuple[Message, ...], state: EpisodeState, env: Env, frame: Frame) -> Edit:
        """The history of the current turn's run, then the turn's own messages."""
        limited = limit_history(messages, self.settings)
        return Edit(messages=limited.messages, cleared=limited.dropped)


@dataclass(frozen=True, slots=True)
class TrimToolOutputs(Step):
    """`ToolOutputTrimmer` on the model input (request-only)."""

    params: ToolOutputTrimmerParams
    notice: TrimNotice
    key: ClassVar[str] = "tool_output_trimmer"
    event: ClassVar[EventKind] = EventKind.CLEARED
    edits: ClassVar[bool] = True

    def edit(self, messages: tuple[Message, ...], state: EpisodeState, env: Env, frame: Frame) -> Edit:
        """Old long outputs replaced by the notice with a preview."""
        trimmed = trim_tool_outputs(messages, self.params, self.notice)
        return Edit(messages=trimmed.messages, cleared=trimmed.trimmed)


def family_texts(texts: Texts) -> OpenAIAgentsTexts:
    """The SDK's own strings under `texts: openai-agents`, the lab's otherwise."""
    if texts.name == "openai-agents":
        from ctxlab.texts.agents import openai_agents_texts

        return openai_agents_texts()
    return CTXLAB_OPENAI_AGENTS_TEXTS


def notice_of(texts: Texts) -> TrimNotice:
    """The trim notice of the run's texts."""
    own = family_texts(texts)
    return TrimNotice(template=own.trim_notice, unknown_tool=own.unknown_tool, structured=own.structured)


def build_trimmer(params: TrimmerParams, texts: Texts) -> StepStrategy:
    """The `openai-agents-trimmer` strategy: the session's history, then the trimmer, then the
    chat-completions model's form of tool outputs."""
    steps = (
        SessionLimit(params.session_settings),
        TrimToolOutputs(params.trimmer(), notice_of(texts)),
        ChatCompletionsOutputs(family_texts(texts).omitted_output),
    )
    return StepStrategy(
        name="openai-agents-trimmer", steps=steps, config=params, source=TRIMMER_SOURCE, futile_limit=0
    )


def build_session(params: SessionParams, texts: Texts) -> StepStrategy:
    """The `openai-agents-session` strategy: the session's history under its limit, then the
    chat-completions model's form of tool outputs."""
    return StepStrategy(
        name="openai-agents-session",
        steps=(
            SessionLimit(params.session_settings),
            ChatCompletionsOutputs(family_texts(texts).omitted_output),
        ),
        config=params,
        source=SESSION_SOURCE,
        futile_limit=0,
    )


TRIMMER_PRESET = Preset(
    name="openai-agents-trimmer",
    summary="OpenAI Agents ToolOutputTrimmer: tool outputs over 500 characters before the last 2 user "
    "turns become a notice with a 200-character preview, in the request only",
    source=TRIMMER_SOURCE,
    params=TrimmerParams,
    build=build_trimmer,
    peers=("openai-agents",),
    notes=NOTES,
    assistant_first="the session's item limit keeps the newest items, which may begin with the assistant's",
)

SESSION_PRESET = Preset(
    name="openai-agents-session",
    summary="OpenAI Agents session with SessionSettings(limit): each turn reads back the last `limit` "
    "stored items, calls and outputs that lost their partner dropped; no limit by default (set one)",
    source=SESSION_SOURCE,
    params=SessionParams,
    build=build_session,
    peers=("openai-agents",),
    notes=NOTES[:4],
    assistant_first="the session's item limit keeps the newest items, which may begin with the assistant's",
)
