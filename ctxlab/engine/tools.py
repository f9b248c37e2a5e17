"""The built-in `Read` tool: reads an offloaded file back through the run's workspace.

The model passes `{"file_path": <path>}` with a path a reminder gave it (a context offload, a
tool-result remainder, an image). The result is the file's bytes as UTF-8 text (undecodable
bytes replaced), so re-reading costs exactly the tokens of that text under the run's counter.

Invariants:
- Every path goes through `safe_path` before the workspace sees it, and the workspace checks it
  again: nothing outside the workspace is ever read.
- The tool never changes the state; a missing file, a refused path, a malformed input or a run
  without a workspace gives an error result worded by the run's texts.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace

from ctxlab.core.messages.blocks import TextBlock, ToolCallBlock, ToolResultBlock
from ctxlab.core.messages.tools import ToolSchema
from ctxlab.core.world.script import Script
from ctxlab.engine.env import Env
from ctxlab.engine.hooks import BuiltinOutcome, Frame
from ctxlab.engine.state import EpisodeState
from ctxlab.engine.workspace import UnsafePathError, safe_path
from ctxlab.texts import Texts, fill

READ_TOOL = "Read"
PATH_ARGUMENT = "file_path"


def read_tool_schema(texts: Texts, name: str = READ_TOOL) -> ToolSchema:
    """The schema of the read tool, worded by `texts`."""
    parameters = {
        "type": "object",
        "properties": {PATH_ARGUMENT: {"type": "string", "description": texts.read_tool_path_description}},
        "required": [PATH_ARGUMENT],
    }
    return ToolSchema.of(name, texts.read_tool_description, parameters)


def with_read_tool(script: Script, texts: Texts, name: str = READ_TOOL) -> Script:
    """`script` offering the read tool too (unchanged when it already has a tool of that name)."""
    if any(tool.name == name for tool in script.tools):
        return script
    return replace(script, tools=(*script.tools, read_tool_schema(texts, name)))


def requested_path(raw_input: str) -> str:
    """The `file_path` argument of a call's input ('' when absent or not a string).

    >>> requested_path('{"file_path": "offload/context-0001.json"}'), requested_path("not json")
    ('offload/context-0001.json', '')
    """
    try:
        args = json.loads(raw_input)
    except json.JSONDecodeError:
        return ""
    path = args.get(PATH_ARGUMENT) if isinstance(args, dict) else None
    return path if isinstance(path, str) else ""


@dataclass(frozen=True, slots=True)
class ReadOffloaded:
    """Runs `Read` calls against the run's workspace."""

    texts: Texts

    def run(self, state: EpisodeState, call: ToolCallBlock, env: Env, frame: Frame) -> BuiltinOutcome:
        """The file's text, or an error result."""
        return BuiltinOutcome(state=state, result=self.result(call, env))

    def result(self, call: ToolCallBlock, env: Env) -> ToolResultBlock:
        """The result block of one call."""
        path = requested_path(call.input)
        try:
            safe_path(path)
            if env.workspace is None:
                raise FileNotFoundError(path)
            data = env.workspace.read(path)
        except UnsafePathError:
            return self._error(call, fill(self.texts.read_tool_refused, path=path))
        except (FileNotFoundError, IsADirectoryError):
            return self._error(call, fill(self.texts.read_tool_missing, path=path))
        text = data.decode("utf-8", errors="replace")
        return ToolResultBlock(id=call.id, name=call.name, output=(TextBlock(text=text),))

    @staticmethod
    def _error(call: ToolCallBlock, text: str) -> ToolResultBlock:
        return ToolResultBlock(id=call.id, name=call.name, output=(TextBlock(text=text),), state="error")
