"""LangChain 1.5.0's own strings, read from the installed package at run time (`texts: langchain`).

`LangChainTexts` are the strings the LangChain family sends or stores; `CTXLAB_LANGCHAIN_TEXTS`
is the lab's own wording of them (used without `texts: langchain`).

Nothing of the package is stored in this project: the summary prompt and the clearing placeholder
are the package's constants; the summary message's wording and the two fixed summaries live
inside the middleware's methods, so they are read by calling those methods on stand-ins.

Importing this module imports no other package; `langchain_texts()` imports langchain and raises
ModuleNotFoundError when it is not installed (the `peers` extra).
"""

from __future__ import annotations

import functools
import types
from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class LangChainTexts:
    """The strings the two middlewares send or store (`texts: langchain` reads LangChain's)."""

    summary_prompt: str  # str.format with {messages}
    summary_prefix: str  # {summary}
    too_long: str
    no_history: str
    placeholder: str


CTXLAB_LANGCHAIN_TEXTS = LangChainTexts(
    summary_prompt=(
        "You are handing this conversation over to yourself. Read it and write the notes you need "
        "to carry on the work once these messages are gone: the goal and every constraint the user "
        "set, what was done and found (exact file paths, identifiers, commands, numbers and error "
        "messages), what is still open, and what to do next. Write only the notes.\n\n"
        "<conversation>\n{messages}\n</conversation>"
    ),
    summary_prefix="Summary of the conversation to date:\n\n{summary}",
    too_long="(The conversation before this point was too long to summarize.)",
    no_history="(There is no earlier conversation.)",
    placeholder="[result cleared]",
)


SUMMARY_MARK = "\x00summary\x00"


@functools.cache
def langchain_texts() -> LangChainTexts:
    """The strings `SummarizationMiddleware` and `ClearToolUsesEdit` send or store."""
    from langchain.agents.middleware import context_editing, summarization

    middleware = summarization.SummarizationMiddleware
    built = middleware._build_new_messages(SUMMARY_MARK)[0].content
    assert isinstance(built, str)
    trims_to_nothing = types.SimpleNamespace(_trim_messages_for_summary=lambda messages: [])
    too_long = middleware._create_summary(trims_to_nothing, [object()])  # type: ignore[arg-type, list-item]
    no_history = middleware._create_summary(trims_to_nothing, [])  # type: ignore[arg-type]
    return LangChainTexts(
        summary_prompt=summarization.DEFAULT_SUMMARY_PROMPT,
        summary_prefix=built.replace(SUMMARY_MARK, "{summary}"),
        too_long=too_long,
        no_history=no_history,
        placeholder=context_editing.DEFAULT_TOOL_PLACEHOLDER,
    )
