"""Text sets: the lab's own wording, and each package's strings read from the installed package.

`load_texts(name)` gives the set a strategy names (`texts: ctxlab | agentscope | langchain |
deepagents | openhands | swe-agent | google-adk | strands | openai-agents | pydantic-ai`). Reading
a package's strings imports it, which takes seconds, so what was read of AgentScope is kept in
the user's cache folder (`ctxlab.texts.cache`), keyed by the installed package's files and by the
reader's own code; the other readers keep theirs for the process. Importing this package imports
no other package.
"""

from __future__ import annotations

import functools
from dataclasses import replace
from pathlib import Path

from ctxlab.texts import cache as text_cache
from ctxlab.texts.agentscope import package_root, read_agentscope_texts
from ctxlab.texts.base import (
    CTXLAB_TEXTS,
    SUMMARY_FIELD_DESCRIPTIONS,
    SUMMARY_FIELDS,
    Texts,
    TextsName,
    fill,
    text_names,
    texts_as_json,
    texts_from_json,
)

__all__ = [
    "CTXLAB_TEXTS",
    "SUMMARY_FIELDS",
    "SUMMARY_FIELD_DESCRIPTIONS",
    "Texts",
    "TextsName",
    "agentscope_texts",
    "fill",
    "load_texts",
    "text_names",
    "texts_as_json",
    "texts_from_json",
]

_READERS = tuple(Path(__file__).with_name(name) for name in ("base.py", "tool_schemas.py", "agentscope.py"))
"""The code that reads AgentScope's texts: part of the cache key (`ctxlab.texts.cache`)."""


@functools.cache
def agentscope_texts() -> Texts:
    """AgentScope 2.0.11's default texts, read from the installed package.

    Reading them imports `agentscope`, so they are read once per installed package and kept in
    the on-disk cache (`ctxlab.texts.cache`), keyed by the package's files and this reader.

    Raises:
        ModuleNotFoundError: agentscope is not installed.
        LookupError: a text cannot be located (another agentscope version).
    """
    root = package_root()
    key = text_cache.fingerprint(root, _READERS)
    stored = text_cache.load("agentscope-texts", key)
    if stored is not None:
        try:
            return texts_from_json(stored)
        except (KeyError, TypeError, ValueError):
            pass  # an entry from a broken write: read the package again
    texts = read_agentscope_texts(root)
    text_cache.store("agentscope-texts", key, texts_as_json(texts))
    return texts


def load_texts(name: TextsName) -> Texts:
    """The named text set. `langchain`, `deepagents`, `openhands`, `swe-agent`, `google-adk`,
    `strands`, `openai-agents` and `pydantic-ai` are ctxlab's set for the loop, named so that their
    family presets read their framework's own strings at build time (`ctxlab.texts.langchain`,
    `ctxlab.texts.deepagents`, `ctxlab.texts.openhands`, SWE-agent's notices in its preset,
    `ctxlab.texts.google_adk`, `ctxlab.texts.strands`, `ctxlab.texts.agents`,
    `ctxlab.texts.pydantic_ai`)."""
    if name == "agentscope":
        return agentscope_texts()
    return CTXLAB_TEXTS if name == "ctxlab" else replace(CTXLAB_TEXTS, name=name)
