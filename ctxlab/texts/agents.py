"""The OpenAI Agents SDK's own strings, read from the installed package at run time
(`texts: openai-agents`).

`OpenAIAgentsTexts` are the strings the family writes into a request: the notice that replaces a
trimmed tool output, the name it shows when the output's call is not in the request, the notices
of a trimmed structured output (`ctxlab.texts.agents_structured`), and the text the
chat-completions model sends for a tool output with no text part.
`CTXLAB_OPENAI_AGENTS_TEXTS` is the lab's own wording (used without `texts: openai-agents`).

Nothing of the package is stored in this project: the notice is built inside
`ToolOutputTrimmer`'s trimming method, so it is read by calling that method on a stand-in output
of marked characters and turning the marks back into fields; the text for an output with no text
part is a constant of the chat-completions converter, read as it is; the structured notices are
read by calling the structured trimming method (`agents_structured.read_structured_notices`).

The module is named after the package's import name, `agents`, the one package it reads.
Importing this module imports no other package; `openai_agents_texts()` imports `agents` and
raises ModuleNotFoundError when it is not installed (the `peers` extra).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from ctxlab.texts.agents_structured import (
    CTXLAB_STRUCTURED_NOTICES,
    StructuredNotices,
    read_structured_notices,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class OpenAIAgentsTexts:
    """The strings the family sends.

    Attributes:
        trim_notice: a trimmed output, for `str.format` with `name`, `chars` (the output's length),
            `preview_chars` (the setting) and `preview` (the output's first characters).
        unknown_tool: the name shown when the output's call is not in the request.
        omitted_output: the tool message's text for an output with no text part (images alone),
            which the chat-completions model does not send.
        structured: the notices of a trimmed structured output.
    """

    trim_notice: str
    unknown_tool: str
    omitted_output: str
    structured: StructuredNotices


CTXLAB_OPENAI_AGENTS_TEXTS = OpenAIAgentsTexts(
    trim_notice="[{name} returned {chars} characters; the first {preview_chars} are kept]\n{preview}...",
    unknown_tool="an unknown tool",
    omitted_output="[the tool returned no text]",
    structured=CTXLAB_STRUCTURED_NOTICES,
)

_CHARS = 98_765
_PREVIEW = 4_321
_NAME = "\x02"
_MARK = "\x01"


def _template(notice: str) -> str:
    """The notice of the marked stand-in as a `str.format` template (its own braces escaped)."""
    escaped = notice.replace("{", "{{").replace("}", "}}")
    fields = {
        _MARK * _PREVIEW: "{preview}",
        _NAME: "{name}",
        str(_CHARS): "{chars}",
        str(_PREVIEW): "{preview_chars}",
    }
    for mark, field in fields.items():
        if escaped.count(mark) != 1:
            raise LookupError(
                f"the trim notice of this openai-agents holds {mark!r} {escaped.count(mark)} times"
            )
        escaped = escaped.replace(mark, field)
    return escaped


@functools.cache
def openai_agents_texts() -> OpenAIAgentsTexts:
    """The strings `ToolOutputTrimmer` and the chat-completions converter write, from the installed
    `openai-agents`.

    Raises:
        ModuleNotFoundError: openai-agents is not installed.
        LookupError: the notice does not have the fields this reader expects, or the converter has
            no text for an output without text (another version).
    """
    from agents.extensions.tool_output_trimmer import ToolOutputTrimmer
    from agents.models import chatcmpl_converter

    omitted = getattr(chatcmpl_converter, "_OMITTED_TOOL_OUTPUT_PLACEHOLDER", None)
    if not isinstance(omitted, str):
        raise LookupError("this openai-agents has no text for a tool output without text")

    trimmer = ToolOutputTrimmer(max_output_chars=1, preview_chars=_PREVIEW)
    item = {"type": "function_call_output", "call_id": "stand-in", "output": _MARK * _CHARS}
    named, _ = trimmer._trim_function_call_output(item, (_NAME,))
    unnamed, _ = trimmer._trim_function_call_output(item, ())
    if named is None or unnamed is None:
        raise LookupError("this openai-agents does not trim a long output")
    head, tail = named["output"].split(_NAME)
    anonymous = unnamed["output"]
    if not (anonymous.startswith(head) and anonymous.endswith(tail)):
        raise LookupError("this openai-agents writes the unknown tool's notice differently")

    def trim(max_output_chars: int, preview_chars: int, parts: list[dict[str, str]], name: str) -> str:
        sdk = ToolOutputTrimmer(max_output_chars=max_output_chars, preview_chars=preview_chars)
        found: Any = sdk._trim_structured_function_call_output({}, parts, (name,))[0]
        if found is None:
            raise LookupError("this openai-agents does not trim a long structured output")
        return str(found["output"])

    return OpenAIAgentsTexts(
        trim_notice=_template(named["output"]),
        unknown_tool=anonymous[len(head) : len(anonymous) - len(tail)],
        omitted_output=omitted,
        structured=read_structured_notices(trim),
    )
