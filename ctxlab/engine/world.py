"""The fake world's built-in tools of the Select layer: the document reader and artifact fetching.

`read_document` answers the four reader actions (`ctxlab.core.world.documents`) over the script's
documents, or the built-in library when the script has none; `fetch_artifact` returns the
payload of one of the script's artifacts by id (`ctxlab.core.world.artifacts`). Both run whenever a
scripted call to them has no result, like the task tools.

Invariants:
- The tools never change the state; an unknown document, section, action or artifact is an
  error result (state `error`) whose text says what was missing.
- A fetched payload is returned byte for byte; it then passes the strategy's per-result step
  like any other tool result (truncation, eviction to files).
"""

from __future__ import annotations

from dataclasses import dataclass

from ctxlab.core.compaction.microcompact import parse_arguments
from ctxlab.core.messages.blocks import TextBlock, ToolCallBlock, ToolResultBlock
from ctxlab.core.world.artifacts import FETCH_ARTIFACT, Artifact, fetch
from ctxlab.core.world.documents import MAX_DIRECT_CHARS, READ_DOCUMENT, Document, answer_text, is_error, read
from ctxlab.core.world.library import builtin_library
from ctxlab.core.world.script import Script
from ctxlab.engine.env import Env
from ctxlab.engine.hooks import BuiltinOutcome, BuiltinTool, Frame
from ctxlab.engine.state import EpisodeState


def _result(call: ToolCallBlock, text: str, error: bool) -> ToolResultBlock:
    return ToolResultBlock(
        id=call.id, name=call.name, output=(TextBlock(text=text),), state="error" if error else "success"
    )


@dataclass(frozen=True, slots=True)
class DocumentReader:
    """`read_document`: catalog, resolve, section and search over a library."""

    library: tuple[Document, ...]
    max_direct_chars: int = MAX_DIRECT_CHARS

    def run(self, state: EpisodeState, call: ToolCallBlock, env: Env, frame: Frame) -> BuiltinOutcome:
        """The reader's answer as JSON text."""
        answer = read(self.library, parse_arguments(call.input), self.max_direct_chars)
        return BuiltinOutcome(state=state, result=_result(call, answer_text(answer), is_error(answer)))


@dataclass(frozen=True, slots=True)
class ArtifactFetcher:
    """`fetch_artifact`: an artifact's payload by id."""

    artifacts: tuple[Artifact, ...]

    def run(self, state: EpisodeState, call: ToolCallBlock, env: Env, frame: Frame) -> BuiltinOutcome:
        """The payload, or an error naming the unknown id."""
        wanted = str(parse_arguments(call.input).get("artifact_id", ""))
        payload = fetch(self.artifacts, wanted)
        if payload is None:
            text = f"Error: no artifact has the id {wanted!r}; use an artifact_id from a reference."
            return BuiltinOutcome(state=state, result=_result(call, text, True))
        return BuiltinOutcome(state=state, result=_result(call, payload, False))


def world_tools(script: Script) -> dict[str, BuiltinTool]:
    """The world's built-in tools for `script`, by name."""
    return {
        READ_DOCUMENT: DocumentReader(script.documents or builtin_library()),
        FETCH_ARTIFACT: ArtifactFetcher(script.artifacts),
    }
