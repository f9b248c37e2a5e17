"""The `sliding-window` preset: a protocol-blind baseline that drops the oldest messages.

Source: the pattern users report breaking (tool results orphaned by trimming): LangChain
`trim_messages(strategy="last")` without `start_on="human"` returns a leading `ToolMessage`
without its `AIMessage(tool_calls)` (langchain #33245), the OpenAI Agents SDK's
`SessionSettings(limit=n)` cuts between a call and its output (openai-agents-python #4322).
OpenAI-view messages are dropped from the front while the request is over `max_tokens`, blind to
calls and results, so it can orphan a result or leave a call unanswered: the lab's protocol
checks must catch it. It is a baseline, not a recommendation.

Defaults: the budget is the model's window (`max_tokens=None`), system messages are never
dropped, at least one message is kept, and the drop edits the request only (`persist=False`,
as a `pre_model_hook` returning `llm_input_messages` does); `persist=True` drops from the
stored history, so an orphan stays in every later request (QwenPaw #5986).

Event: `dropped` on a call whose request drops a message the previous request showed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ctxlab.core.compaction.window import SlidingWindowParams, slide_window
from ctxlab.core.events import EventKind
from ctxlab.core.messages.message import Message
from ctxlab.core.settings import SettingError
from ctxlab.engine.env import Env
from ctxlab.engine.hooks import Frame
from ctxlab.engine.state import EpisodeState, with_context
from ctxlab.presets.preset import UNSENT_THINKING, Preset
from ctxlab.presets.steps import Edit, Step, Stepped, StepStrategy, request_sizer, unit_keys
from ctxlab.texts import Texts

SOURCE = "protocol-blind trim_messages(strategy='last') without start_on (langchain #33245)"


@dataclass(frozen=True, slots=True, kw_only=True)
class WindowParams:
    """The window's settings.

    Attributes:
        max_tokens: the request budget in tokens, 1 or more (None: the model's window).
        keep_system: never drop system messages.
        min_messages: never keep fewer view messages; 1 or more, so the latest message (the
            one the model answers) is always sent.
        persist: drop from the stored history instead of each request.
    """

    max_tokens: int | None = None
    keep_system: bool = True
    min_messages: int = 1
    persist: bool = False

    def __post_init__(self) -> None:
        if self.max_tokens is not None and self.max_tokens < 1:
            raise SettingError(
                ("max_tokens",),
                f"max_tokens={self.max_tokens}: no request fits a budget of {self.max_tokens} "
                "tokens, so every call would drop all it may; use 1 or more, or leave it unset "
                "for the model's window",
            )
        if self.min_messages < 1:
            raise SettingError(
                ("min_messages",),
                f"min_messages={self.min_messages}: the window could then drop every message, the "
                "latest one too, and leave the model nothing to answer; use 1 or more (1 keeps "
                "the latest message)",
            )

    def core(self, context_size: int) -> SlidingWindowParams:
        """The core window settings for a model window of `context_size`."""
        return SlidingWindowParams(
            max_tokens=self.max_tokens if self.max_tokens is not None else context_size,
            keep_system=self.keep_system,
            min_messages=self.min_messages,
        )


@dataclass(frozen=True, slots=True)
class SlideWindow(Step):
    """Drop the oldest view messages while over budget (request-only unless `persist`)."""

    params: WindowParams
    key: ClassVar[str] = "sliding_window"
    event: ClassVar[EventKind] = EventKind.DROPPED
    edits: ClassVar[bool] = True

    def compress(self, state: EpisodeState, env: Env, frame: Frame) -> Stepped:
        """With `persist`, the drop edits the stored history."""
        if not self.params.persist:
            return Stepped(state=state)
        sizer = request_sizer(state, env, frame)
        window = slide_window(state.context, sizer=sizer, params=self.params.core(env.context_size))
        if not window.dropped:
            return Stepped(state=state)
        env.recorder.event(self.event)
        return Stepped(state=with_context(state, window.messages, env.counter))

    def edit(self, messages: tuple[Message, ...], state: EpisodeState, env: Env, frame: Frame) -> Edit:
        """Without `persist`, each request is cut from the full history."""
        if self.params.persist:
            return Edit(messages=messages)
        sizer = request_sizer(state, env, frame)
        window = slide_window(messages, sizer=sizer, params=self.params.core(env.context_size))
        if not window.dropped:
            return Edit(messages=messages)
        return Edit(messages=window.messages, cleared=unit_keys(messages, window.dropped))


def build(params: WindowParams, texts: Texts) -> StepStrategy:
    """The `sliding-window` strategy."""
    return StepStrategy(name="sliding-window", steps=(SlideWindow(params),), config=params, source=SOURCE)


PRESET = Preset(
    name="sliding-window",
    summary="protocol-blind baseline: the oldest OpenAI-view messages dropped to fit the window "
    "(it can orphan tool results; the lab reports it)",
    source=SOURCE,
    params=WindowParams,
    build=build,
    assistant_first="keeping the last messages may start at an assistant turn",
    notes=(UNSENT_THINKING,),
)
