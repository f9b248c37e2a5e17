"""pydantic-ai's and its harness's own strings, read from the installed packages at run time
(`texts: pydantic-ai`).

`PydanticAITexts` are the strings the compaction capabilities of pydantic-ai-harness 0.62.0 send or
store; `CTXLAB_PYDANTIC_AI_TEXTS` is the lab's own wording of them (used without
`texts: pydantic-ai`).

Nothing of the packages is stored in this project: the summary prompt, the summarizer's
instructions, the incremental-update instruction and the clearing placeholder are the harness's
constants and defaults; the frame pydantic-ai-slim puts around a stored summary when it sends it is
read by framing a marker with the package's own function; the two retry messages a blank summary
gets are rendered by the packages' own code (the harness's output validator raises its feedback,
pydantic-ai renders it and its own no-text feedback as a model without mid-conversation system
messages is sent them); how a file a tool returned is named and framed is rendered by
pydantic-ai-slim's own tool return on a marked file.

Importing this module imports no other package; `pydantic_ai_texts()` imports the packages and
raises ModuleNotFoundError when they are not installed (the `peers` extra).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class PydanticAITexts:
    """The strings the harness's compaction sends or stores.

    Attributes:
        summary_prompt: the summary request's prompt (`str.format` with `{messages}`).
        instructions: the summarizer agent's instructions (its system message).
        incremental: what follows the prompt when an earlier summary is updated.
        placeholder: what a cleared tool result holds.
        summary_head: what a stored summary is sent after, in its user message.
        summary_tail: what a stored summary is sent before, in its user message.
        blank_retry: the user message that asks the summarizer again after a whitespace answer.
        no_text_retry: the user message that asks the summarizer again after an answer with no
            text.
        file_reference: what stands for a file a tool returned in its return's text (`{id}`: the
            file's identifier).
        file_open: what opens a returned file in the user message after the returns
            (`{tool_name}`, `{tool_call_id}`, `{file_id}`: attribute values, escaped).
        file_close: what closes it.
    """

    summary_prompt: str
    instructions: str
    incremental: str
    placeholder: str
    summary_head: str
    summary_tail: str
    blank_retry: str
    no_text_retry: str
    file_reference: str
    file_open: str
    file_close: str


CTXLAB_PYDANTIC_AI_TEXTS = PydanticAITexts(
    summary_prompt=(
        "Write the notes you need to carry on this work once the messages below are gone: the goal "
        "and every constraint, what was done and found (exact names, paths and numbers), what is "
        "still open, and what to do next. Write only the notes.\n\n<messages>\n{messages}\n</messages>"
    ),
    instructions="You write handover notes of conversations.",
    incremental=(
        "Your earlier notes are in <previous-summary> below. Bring them up to date with the "
        "conversation above: keep what still holds, drop what no longer does, add what is new."
    ),
    placeholder="[result cleared]",
    summary_head="<earlier-conversation>\n",
    summary_tail="\n</earlier-conversation>",
    blank_retry=(
        "[automated check, not the user] Your notes came back empty. Write the notes on the "
        "conversation above."
    ),
    no_text_retry="[automated check, not the user] Answer with the notes as text.",
    file_reference="[file {id}]",
    file_open='<tool-file tool="{tool_name}" call="{tool_call_id}" id="{file_id}">',
    file_close="</tool-file>",
)

_MARK = "\x00summary\x00"


@functools.cache
def pydantic_ai_texts() -> PydanticAITexts:
    """The strings of the installed pydantic-ai-harness and pydantic-ai-slim."""
    from pydantic_ai import models
    from pydantic_ai_harness.compaction import ClearToolResults
    from pydantic_ai_harness.compaction import _summarizing_compaction as summarizing

    framed = models._conversation_summary_text(_MARK)
    head, tail = framed.split(_MARK)
    defaults = {f.name: f.default for f in dataclasses.fields(summarizing.SummarizingCompaction)}
    placeholder = {f.name: f.default for f in dataclasses.fields(ClearToolResults)}["placeholder"]
    return PydanticAITexts(
        summary_prompt=str(defaults["summary_prompt"]),
        instructions=str(defaults["instructions"]),
        incremental=summarizing._INCREMENTAL_UPDATE_INSTRUCTION,
        placeholder=str(placeholder),
        summary_head=head,
        summary_tail=tail,
        blank_retry=_blank_retry(summarizing._non_empty_summary),
        no_text_retry=_no_text_retry(),
        **_file_texts(),
    )


def _feedback(content: str, cause: str) -> str:
    """A retry's feedback as pydantic-ai sends it on a model without mid-conversation system
    messages: the application's own feedback (`no_output`) as `<system>`-tagged user text, any
    other in its user-voice fence."""
    from pydantic_ai import _framing
    from pydantic_ai import messages as pa

    part = pa.RetryFeedbackPart(content=content, retry=pa.RetryInfo(cause=cause))  # type: ignore[arg-type]
    text = part.model_response()
    speaks = pa._retry_feedback_speaks_for_the_harness(part)
    return _framing.wrap(_framing.SYSTEM_TAG, text) if speaks else text


def _blank_retry(validate: Callable[[str], str]) -> str:
    """The feedback the harness's output validator raises on a whitespace summary."""
    from pydantic_ai.exceptions import ModelRetry

    try:
        validate(" ")
    except ModelRetry as retry:
        return _feedback(retry.message, "model_retry")
    raise LookupError("the summary validator accepts a blank summary")


def _no_text_retry() -> str:
    """pydantic-ai's feedback on an answer with no text, where text is the only output."""
    from pydantic_ai import messages as pa

    return _feedback(pa._no_output_feedback_text([pa._NO_OUTPUT_RETURN_TEXT]), "no_output")


_TOOL, _CALL, _FILE = "\x01", "\x02", "\x03"


def _file_texts() -> dict[str, str]:
    """How pydantic-ai sends a file a tool returned on a model whose tool messages take text only:
    a return of one marked file, rendered by the package, its marks turned back into fields."""
    from pydantic_ai import messages as pa

    image = pa.BinaryContent(data=b"\x00", media_type="image/png", identifier=_FILE)
    part = pa.ToolReturnPart(tool_name=_TOOL, content=image, tool_call_id=_CALL)
    text, framed = part.model_response_str_and_user_content()
    if (
        len(framed) != 3
        or framed[1] is not image
        or not all(isinstance(t, str) for t in (framed[0], framed[2]))
    ):
        raise LookupError("this pydantic-ai frames a returned file otherwise")
    opening, closing = str(framed[0]), str(framed[2])
    marks = {_TOOL: "{tool_name}", _CALL: "{tool_call_id}", _FILE: "{file_id}"}
    if text.count(_FILE) != 1 or any(opening.count(mark) != 1 for mark in marks):
        raise LookupError("this pydantic-ai names a returned file otherwise")
    for mark, name in marks.items():
        opening = opening.replace(mark, name)
    return {"file_reference": text.replace(_FILE, "{id}"), "file_open": opening, "file_close": closing}
