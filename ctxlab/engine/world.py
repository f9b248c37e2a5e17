"""The fake world's built-in tools: the document reader, artifact fetching, and the toolkit's
activation tool and skill viewer.

`read_document` answers the four reader actions (`ctxlab.core.world.documents`) over the script's
documents, or the built-in library when the script has none; `fetch_artifact` returns the
payload of one of the script's artifacts by id (`ctxlab.core.world.artifacts`). Both run whenever a
scripted call to them has no result, like the task tools.

`reset_tools` (when the script has tool groups) and `Skill` (when it has skills) answer as
AgentScope's toolkit does (`ctxlab.core.agentscope.toolkit`), worded by the run's texts; the
activation tool keeps the active groups in the state's `activated_groups` memo.

Invariants:
- The reader and the fetcher never change the state; an unknown document, section, action or artifact is an
  error result (state `error`) whose text says what was missing.
- A fetched payload is returned byte for byte; it then passes the strategy's per-result step
  like any other tool result (truncation, eviction to files).
"""

from __future__ import annotations

from dataclasses import dataclass

from ctxlab.core.agentscope.toolkit import ACTIVE_GROUPS, RESET_TOOLS, reset_tools, view_skill
from ctxlab.core.compaction.microcompact import parse_arguments
from ctxlab.core.messages.blocks import TextBlock, ToolCallBlock, ToolResultBlock
from ctxlab.core.world.artifacts import FETCH_ARTIFACT, Artifact, fetch
from ctxlab.core.world.documents import MAX_DIRECT_CHARS, READ_DOCUMENT, Document, answer_text, is_error, read
from ctxlab.core.world.library import builtin_library
from ctxlab.core.world.script import Script
from ctxlab.core.world.toolkit import Skill, ToolGroup
from ctxlab.engine.env import Env
from ctxlab.engine.hooks import BuiltinOutcome, BuiltinTool, Frame
from ctxlab.engine.state import EpisodeState, with_memo


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


@dataclass(frozen=True, slots=True)
class ResetTools:
    """`reset_tools`: sets which tool groups are active (the input's booleans are the final state)."""

    groups: tuple[ToolGroup, ...]

    def run(self, state: EpisodeState, call: ToolCallBlock, env: Env, frame: Frame) -> BuiltinOutcome:
        """The activated groups' instructions; an unknown group name changes nothing."""
        answer = reset_tools(self.groups, call.input, env.texts)
        if answer.active is not None:
            state = with_memo(state, ACTIVE_GROUPS, answer.active)
        return BuiltinOutcome(state=state, result=_result(call, answer.text, answer.error))


@dataclass(frozen=True, slots=True)
class SkillViewer:
    """`Skill`: a skill's instructions, read by name."""

    skills: tuple[Skill, ...]

    def run(self, state: EpisodeState, call: ToolCallBlock, env: Env, frame: Frame) -> BuiltinOutcome:
        """The skill's markdown, or the not-found error."""
        answer = view_skill(self.skills, call.input, env.texts)
        return BuiltinOutcome(state=state, result=_result(call, answer.text, answer.error))


def world_tools(script: Script, skill_viewer: str = "Skill") -> dict[str, BuiltinTool]:
    """The world's built-in tools for `script`, by name (`skill_viewer`: the viewer's name in the
    run's texts)."""
    tools: dict[str, BuiltinTool] = {
        READ_DOCUMENT: DocumentReader(script.documents or builtin_library()),
        FETCH_ARTIFACT: ArtifactFetcher(script.artifacts),
    }
    if script.tool_groups:
        tools[RESET_TOOLS] = ResetTools(script.tool_groups)
    if script.skills:
        tools[skill_viewer] = SkillViewer(script.skills)
    return tools
