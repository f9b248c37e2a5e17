"""The pydantic-ai presets: the compaction capabilities of pydantic-ai-harness 0.62.0 (on
pydantic-ai-slim 2.62.0, the version it pins), exact to the installed packages.

- `pydantic-ai-clear`: `ClearToolResults`, the oldest tool results blanked in place.
- `pydantic-ai-window`: `SlidingWindowCompaction`, the oldest messages dropped.
- `pydantic-ai-summary`: `SummarizingCompaction`, the oldest messages summarized by a model call.

Each runs before every model request, decides with the harness's estimate (about four characters
per token over the history's text and the instructions; `request_counter`, recorded as
`strategy_tokens`), and edits the stored history. None has a futile-compaction breaker. Under
`texts: pydantic-ai` they use the harness's own summary prompt, summarizer instructions,
incremental-update instruction and placeholder, pydantic-ai's frame around a sent summary, and
the feedback a blank summary is asked again with (once: whitespace by the summary agent's output
validator, no text by pydantic-ai's own check; a second blank answer ends the run), read at run
time (`ctxlab.texts.pydantic_ai`); otherwise the lab's wording.

Each user turn is a pydantic-ai run held to pydantic-ai's default limit of 50 requests, the
harness's summary requests included (`limits.py`): the request that would pass it ends the run.

Declared deviations (`tests/parity/CHECKLIST.md`, PA section): no trigger means never (the package
refuses it); the scripted models report no usage, so no estimate is anchored on a provider's
count; receipts, pins, capability loads, `keep_user_messages`, `bridge_prefix`, a separate summarizer
model and a custom tokenizer are not reproduced.

Every request sends a file a tool returned (an image) as pydantic-ai sends it to an OpenAI chat
model: named in the return's text, framed in a user message after the round's returns
(`files.py`, request-only); a user's image as it maps an `ImageUrl` or a `BinaryContent` of the
prompt (a URL as given, base64 as its bytes encoded anew), counted by no estimate. A prompt of
several items is counted with its texts joined by nothing and shown to the summarizer with a
space between them, as the harness does (`view.py`, `harness.py`).
"""

from __future__ import annotations

import functools

from ctxlab.core.messages.blocks import Block, with_thinking_sent
from ctxlab.core.messages.latest import REQUESTS
from ctxlab.core.messages.message import Message
from ctxlab.core.messages.tools import ToolSchema
from ctxlab.core.wire.views import REASONING_FIELD
from ctxlab.engine.env import RequestCounter
from ctxlab.presets.preset import Preset
from ctxlab.presets.pydantic_ai.files import SentFiles, stored_of
from ctxlab.presets.pydantic_ai.limits import RequestLimit
from ctxlab.presets.pydantic_ai.params import ClearToolResultsParams, SlidingWindowParams, SummarizingParams
from ctxlab.presets.pydantic_ai.returns import FileTexts
from ctxlab.presets.pydantic_ai.steps import ClearStep, SummarizeStep, WindowStep, summary_frame
from ctxlab.presets.pydantic_ai.view import estimate_stored_tokens
from ctxlab.presets.steps import StepStrategy
from ctxlab.texts import Texts
from ctxlab.texts.pydantic_ai import CTXLAB_PYDANTIC_AI_TEXTS, PydanticAITexts

__all__ = [
    "CLEAR_PRESET",
    "SUMMARY_PRESET",
    "VERSIONS",
    "WINDOW_PRESET",
    "ClearToolResultsParams",
    "SlidingWindowParams",
    "SummarizingParams",
    "build_clear",
    "build_summary",
    "build_window",
]

VERSIONS = "pydantic-ai-harness 0.62.0 (pydantic-ai-slim 2.62.0)"
CLEAR_SOURCE = f"{VERSIONS} compaction/_clear_tool_results.py (ClearToolResults)"
WINDOW_SOURCE = f"{VERSIONS} compaction/_sliding_window_compaction.py (SlidingWindowCompaction)"
SUMMARY_SOURCE = f"{VERSIONS} compaction/_summarizing_compaction.py (SummarizingCompaction)"
NOTES = (
    "no trigger set: never compacts (the harness refuses a capability without one)",
    "the scripted models report no usage: the harness's estimate is its character count alone",
    "each user turn is a pydantic-ai run of at most request_limit requests (50 requests, pydantic-ai's "
    "default; null: no limit), the harness's summary requests included: the request that would pass it "
    "ends the run with an error; no round forces an answer (react.max_iters defaults to 9,999)",
    "a model's reasoning is sent back in reasoning_content and counted, as pydantic-ai does; its empty "
    "reasoning_content on this turn's calls without reasoning (no tokens) is left out",
    "an answer with no text and no call ends the reply; pydantic-ai asks the model again after its "
    "retry prompt (declared as PA24)",
    "a call's arguments that are no JSON object are sent as written and the call answered with its "
    "result; pydantic-ai sends them wrapped as INVALID_JSON and answers with its validation retry "
    "prompt, running no tool (declared as PA25)",
    "a file a tool returned (an image) is sent as pydantic-ai sends it: named by its content in the "
    "tool message's text, a JSON array of the return's items, and framed with its tool, call and name "
    "in a user message after the round's tool messages; the harness counts the return's items joined",
    "a user's image is sent as pydantic-ai maps its prompt's ImageUrl or BinaryContent (base64 encoded "
    "anew) and counted by no estimate; the summarizer reads a prompt's texts joined with a space",
)


def pa_texts(texts: Texts) -> PydanticAITexts:
    """The harness's own strings under `texts: pydantic-ai`, the lab's otherwise."""
    if texts.name == "pydantic-ai":
        from ctxlab.texts.pydantic_ai import pydantic_ai_texts

        return pydantic_ai_texts()
    return CTXLAB_PYDANTIC_AI_TEXTS


def counted_request(
    messages: tuple[Message, ...], tools: tuple[ToolSchema, ...], texts: PydanticAITexts
) -> int:
    """The harness's estimate of a request: its messages as the history holds them (returned
    files in their returns, `files.stored_of`), the system prompt as the instructions (tools are
    not counted)."""
    system = messages[0] if messages and messages[0].role == "system" else None
    instructions = "".join(getattr(b, "text", "") for b in system.blocks) if system is not None else ""
    rest = stored_of(REQUESTS.rest(messages, 1) if system is not None else messages)
    return estimate_stored_tokens(rest, summary_frame(texts), instructions)


def harness_counter(texts: PydanticAITexts) -> RequestCounter:
    """`counted_request` with the text set's summary frame."""
    return functools.partial(counted_request, texts=texts)


def _strategy(
    name: str, step: ClearStep | WindowStep | SummarizeStep, config: object, source: str
) -> StepStrategy:
    files = FileTexts(step.texts.file_reference, step.texts.file_open, step.texts.file_close)
    return StepStrategy(
        name=name,
        steps=(RequestLimit(step.params.request_limit), step, SentFiles(files)),
        config=config,
        source=source,
        futile_limit=0,
        request_counter=harness_counter(step.texts),
        kept_answer=kept_answer,
    )


def kept_answer(blocks: tuple[Block, ...]) -> tuple[Block, ...]:
    """A model's answer as pydantic-ai keeps it: reasoning an OpenAI-compatible model returned in
    `reasoning_content` is a `ThinkingPart` of that field from the same provider, which
    `OpenAIChatModel` sends back in that field (`openai_chat_send_back_thinking_parts='auto'`)."""
    return with_thinking_sent(blocks, REASONING_FIELD)


def build_clear(params: ClearToolResultsParams, texts: Texts) -> StepStrategy:
    """The `pydantic-ai-clear` strategy."""
    return _strategy("pydantic-ai-clear", ClearStep(pa_texts(texts), params), params, CLEAR_SOURCE)


def build_window(params: SlidingWindowParams, texts: Texts) -> StepStrategy:
    """The `pydantic-ai-window` strategy."""
    return _strategy("pydantic-ai-window", WindowStep(pa_texts(texts), params), params, WINDOW_SOURCE)


def build_summary(params: SummarizingParams, texts: Texts) -> StepStrategy:
    """The `pydantic-ai-summary` strategy."""
    return _strategy("pydantic-ai-summary", SummarizeStep(pa_texts(texts), params), params, SUMMARY_SOURCE)


NO_ROUND_LIMIT = 9_999
"""pydantic-ai forces no answer after some rounds (a run ends at its request limit alone); as a
round cap this is never reached."""

PEERS = ("pydantic-ai-harness", "pydantic-ai-slim")
"""The distributions the pydantic-ai presets are proven against."""

CLEAR_PRESET = Preset(
    name="pydantic-ai-clear",
    summary="pydantic-ai-harness ClearToolResults: over the trigger (none by default: set one), all but the "
    "3 newest tool results blanked in the stored history",
    source=CLEAR_SOURCE,
    params=ClearToolResultsParams,
    build=build_clear,
    loop_limit=NO_ROUND_LIMIT,
    peers=PEERS,
    notes=NOTES,
)

WINDOW_PRESET = Preset(
    name="pydantic-ai-window",
    summary="pydantic-ai-harness SlidingWindowCompaction: over the trigger (none by default: set one), the "
    "history cut to its last 40 messages at a tool-safe point, the first user request kept",
    source=WINDOW_SOURCE,
    params=SlidingWindowParams,
    build=build_window,
    loop_limit=NO_ROUND_LIMIT,
    peers=PEERS,
    notes=NOTES,
)

SUMMARY_PRESET = Preset(
    name="pydantic-ai-summary",
    summary="pydantic-ai-harness SummarizingCompaction: over the trigger (none by default: set one), all but "
    "the last 20 messages summarized into a request after the first user request, updated incrementally",
    source=SUMMARY_SOURCE,
    params=SummarizingParams,
    build=build_summary,
    loop_limit=NO_ROUND_LIMIT,
    peers=PEERS,
    notes=NOTES,
)
