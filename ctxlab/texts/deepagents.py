"""deepagents 0.7.32's own strings and built-in tools, read from the installed package at run time
(`texts: deepagents`).

`DeepAgentsTexts` are what the `deepagents` family sends or stores: the summary prompt, the
summary message (naming the saved history), the stub and preview notes of an evicted result, and
the built-in tools `create_deep_agent` offers (as sent, and how many characters its
summarization counter sees of each). `CTXLAB_DEEPAGENTS_TEXTS` is the lab's own wording of the
same, with tools of the same names and its own descriptions (used without `texts: deepagents`).

Nothing of the package is stored in this project. Constants are read from its modules; the
summary message is built by the middleware's own method around marks; the tools are what a
`create_deep_agent` agent binds to its model, read by running one turn of it with a stand-in
model that answers at once (no network, nothing written outside the process).

Importing this module imports no other package; `deepagents_texts()` imports deepagents (and the
langchain packages it runs on) and raises ModuleNotFoundError when it is not installed (the
`peers` extra).
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import Any

from ctxlab.core.messages.tools import ToolSchema


@dataclass(frozen=True, slots=True, kw_only=True)
class BuiltinTool:
    """A built-in tool: its schema as sent, and the characters deepagents' counter sees of it."""

    schema: ToolSchema
    counted_chars: int


@dataclass(frozen=True, slots=True, kw_only=True)
class DeepAgentsTexts:
    """The strings the deepagents family sends or stores.

    Attributes:
        summary_prompt: the summary request, `str.format` with `{messages}` (the XML transcript).
        summary_message: the summary as it enters the context; `{path}` and `{summary}`.
        too_long: the summary when trimming leaves nothing to summarize (no model call).
        evicted_stub: an evicted result; `{tool_call_id}`, `{file_path}`, `{preview_note}`,
            `{content_sample}`.
        evicted_human: an evicted user message as the model sees it; `{file_path}`,
            `{preview_note}`, `{content_sample}`.
        preview_plain / preview_head_tail: the note before a whole / head-and-tail preview;
            `{subject}`.
        caveat_omitted / caveat_clipped: why lines are missing or cut in the preview.
        truncation_marker: the preview line standing for the lines between; `{omitted_lines}`.
        read_cut_notice: what follows the first 4,000 characters of a `read_file` result cut
            because the request is over budget; `{path}` is the file it read.
        argument_truncation: what follows the first 20 characters of a truncated argument.
        media_file: the summary transcript's reference to saved media that is not an image, audio
            or video; `{path}`.
        media_failed: the summary transcript's stand-in for inline media that could not be saved.
        tools: the built-in tools, in the order the agent offers them (before the user's).
    """

    summary_prompt: str
    summary_message: str
    too_long: str
    evicted_stub: str
    evicted_human: str
    preview_plain: str
    preview_head_tail: str
    caveat_omitted: str
    caveat_clipped: str
    truncation_marker: str
    read_cut_notice: str
    argument_truncation: str
    media_file: str
    media_failed: str
    tools: tuple[BuiltinTool, ...]


def counted_chars(schema: ToolSchema) -> int:
    """Characters deepagents' counter sees of a tool given as a schema: the JSON of its name,
    description and parameters (the parameters' own title and description left out)."""
    parameters = json.loads(schema.parameters)
    parameters.pop("title", None)
    parameters.pop("description", None)
    return len(json.dumps({"name": schema.name, "description": schema.description, "parameters": parameters}))


def _own_tool(name: str, about: str, *properties: str) -> BuiltinTool:
    """One of the lab's built-in tools: every parameter a required string."""
    props = {key: {"type": "string"} for key in properties}
    parameters = json.dumps({"type": "object", "properties": props, "required": list(properties)})
    schema = ToolSchema(name=name, description=about, parameters=parameters)
    return BuiltinTool(schema=schema, counted_chars=counted_chars(schema))


CTXLAB_BUILTIN_TOOLS = (
    _own_tool("ls", "List the files in a directory of the agent's filesystem.", "path"),
    _own_tool(
        "read_file",
        "Read a file, numbered by line; give an offset and a limit to read part of a long file.",
        "file_path",
    ),
    _own_tool("write_file", "Write a new file or replace a file's content.", "file_path", "content"),
    _own_tool(
        "edit_file",
        "Replace an exact string in a file by another.",
        "file_path",
        "old_string",
        "new_string",
    ),
    _own_tool("delete", "Delete a file or a directory.", "path"),
    _own_tool("glob", "Find files whose paths match a glob pattern.", "pattern"),
    _own_tool("grep", "Search the files for a literal text.", "pattern"),
    _own_tool(
        "task",
        "Hand a self-contained task to a sub-agent with its own context; its final answer comes back.",
        "description",
        "subagent_type",
    ),
)

CTXLAB_DEEPAGENTS_TEXTS = DeepAgentsTexts(
    summary_prompt=(
        "You are handing this conversation over to yourself. Read it and write the notes you need "
        "to carry on the work once these messages are gone: the goal and every constraint the user "
        "set, what was done and found (exact file paths, identifiers, commands, numbers and error "
        "messages), what is still open, and what to do next. Write only the notes.\n\n"
        "<messages>\n{messages}\n</messages>"
    ),
    summary_message=(
        "The conversation so far was summarized. Every earlier message is saved at {path}; read it "
        "there when you need a detail the summary lacks.\n\n<summary>\n{summary}\n</summary>"
    ),
    too_long="(The conversation before this point was too long to summarize.)",
    evicted_stub=(
        "The result of tool call {tool_call_id} was too large for the context and is saved at "
        "{file_path}. Read it from there a part at a time, with an offset and a limit.\n\n"
        "{preview_note}\n\n{content_sample}\n"
    ),
    evicted_human=(
        "This message was too large for the context and is saved at {file_path}. Read it from "
        "there a part at a time, with an offset and a limit.\n\n{preview_note}\n\n{content_sample}\n"
    ),
    preview_plain="The whole {subject}",
    preview_head_tail="The first and last lines of the {subject}",
    caveat_omitted="a line `... [N lines truncated] ...` stands for the lines between",
    caveat_clipped="lines longer than 1000 characters are cut after their first 1000",
    truncation_marker="... [{omitted_lines} lines truncated] ...",
    read_cut_notice=(
        "\n\n[The rest of this result was cut to fit the context; the whole file is at {path}. "
        "Read it a part at a time, with an offset and a limit.]"
    ),
    argument_truncation="...(argument truncated)",
    media_file='<file url="{path}" />',
    media_failed='<media saved="no" />',
    tools=CTXLAB_BUILTIN_TOOLS,
)


SUMMARY_MARK = "\x00summary\x00"
PATH_MARK = "\x00path\x00"


@functools.cache
def deepagents_texts() -> DeepAgentsTexts:
    """deepagents' own strings and built-in tools, read from the installed package."""
    from deepagents.backends import StateBackend, utils
    from deepagents.middleware import _message_eviction as eviction
    from deepagents.middleware import filesystem, summarization

    from ctxlab.texts.langchain import langchain_texts

    built = summarization.SummarizationMiddleware._build_new_messages_with_path(
        None,  # type: ignore[arg-type]  # the method reads nothing of its instance
        SUMMARY_MARK,
        PATH_MARK,
    )[0].content
    assert isinstance(built, str)
    model, bound = _stand_in()
    unconfigured = summarization.SummarizationMiddleware(model, backend=StateBackend())
    return DeepAgentsTexts(
        summary_prompt=summarization.DEEPAGENTS_DEFAULT_SUMMARY_PROMPT,
        summary_message=built.replace(SUMMARY_MARK, "{summary}").replace(PATH_MARK, "{path}"),
        too_long=langchain_texts().too_long,
        evicted_stub=eviction._TOO_LARGE_TOOL_MSG,
        evicted_human=filesystem._TOO_LARGE_HUMAN_MSG,
        preview_plain=eviction._PREVIEW_NOTE_PLAIN,
        preview_head_tail=eviction._PREVIEW_NOTE_HEAD_TAIL,
        caveat_omitted=eviction._CAVEAT_OMITTED_LINES,
        caveat_clipped=eviction._CAVEAT_CLIPPED_LINES,
        truncation_marker=utils.TRUNCATION_MARKER_TEMPLATE,
        read_cut_notice=_read_cut_notice(),
        argument_truncation=str(unconfigured._truncation_text),
        media_file=_media_file(),
        media_failed=summarization._OFFLOAD_FAILED_PLACEHOLDER,
        tools=_builtin_tools(model, bound),
    )


def _media_file() -> str:
    """The reference deepagents writes for saved media that is not an image, audio or video."""
    from deepagents.middleware import summarization

    block = summarization._media_reference_block(PATH_MARK, "application/octet-stream")
    text = str(block["text"])
    return text.replace("{", "{{").replace("}", "}}").replace(PATH_MARK, "{path}")


def _read_cut_notice() -> str:
    """The notice deepagents appends to a `read_file` result it cuts to fit the budget."""
    from deepagents.middleware import _overflow_clip
    from langchain_core.messages import ToolMessage

    cut = _overflow_clip._slice_read_file_tm(ToolMessage(content="", tool_call_id="c"), PATH_MARK)
    assert isinstance(cut.content, str)
    return cut.content.replace("{", "{{").replace("}", "}}").replace(PATH_MARK, "{path}")


def _stand_in() -> tuple[Any, list[dict[str, Any]]]:
    """A chat model that answers at once, and the list the tools bound to it are added to."""
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
    from langchain_core.utils.function_calling import convert_to_openai_tool

    bound: list[dict[str, Any]] = []

    class StandIn(BaseChatModel):
        @property
        def _llm_type(self) -> str:
            return "ctxlab-stand-in"

        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

        def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
            bound.extend(kwargs.get("tools") or ())
            return ChatResult(generations=[ChatGeneration(message=AIMessage(content="done"))])

    return StandIn(profile={"max_input_tokens": 100_000}), bound


def _builtin_tools(model: Any, bound: list[dict[str, Any]]) -> tuple[BuiltinTool, ...]:
    """The tools a `create_deep_agent` agent offers before the user's, as bound to its model and
    as its summarization middleware counts them (read by running one turn)."""
    from deepagents import create_deep_agent
    from langchain.agents.middleware import AgentMiddleware
    from langchain_core.messages.utils import count_tokens_approximately

    counted: dict[str, int] = {}

    class CountEachTool(AgentMiddleware):
        """Sees the tools as the summarization middleware does (it runs inside it)."""

        def wrap_model_call(self, request: Any, handler: Any) -> Any:
            for tool in request.tools:
                name = tool["name"] if isinstance(tool, dict) else tool.name
                counted[name] = count_tokens_approximately([], tools=[tool], chars_per_token=1.0)
            return handler(request)

    agent = create_deep_agent(model, middleware=[CountEachTool()])
    agent.invoke({"messages": [{"role": "user", "content": "hello"}]})
    tools = []
    for tool in bound:
        function = tool["function"]
        schema = ToolSchema(
            name=function["name"],
            description=function.get("description", ""),
            parameters=json.dumps(function.get("parameters", {})),
        )
        tools.append(BuiltinTool(schema=schema, counted_chars=counted[schema.name]))
    return tuple(tools)
