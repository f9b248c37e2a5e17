"""Google ADK's texts (`texts: google-adk`), read from the installed package at run time.

`google-adk==2.13.0` needs google-genai < 3 and opentelemetry-api <= 1.44, which the lab's other
peers pin higher, so it lives in an environment of its own (`make adk-env` creates `.venv-adk`;
`CTXLAB_ADK_PYTHON` names another interpreter). The strings are produced there by the package
itself: its summarizer's prompt template and tool-content cap as constants, and the lines it
writes for each event, the truncation notice, the agent's identity instruction and the user
message its model adapters add after a model turn by calling its own methods on stand-in events
with marker values. They are read back as JSON into the lab's text
cache (`ctxlab.texts.cache`), keyed by the package's files.

Invariant: nothing of the package is stored in the project; a missing environment is an error
that names the fix.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from ctxlab.texts.elsewhere import Environment

ADK_VERSION = "2.13.0"

_READER = r"""
import asyncio, json, warnings
warnings.simplefilter("ignore")
from importlib.metadata import version
from types import SimpleNamespace
from google.genai import types
from google.adk.agents import LlmAgent
from google.adk.apps.llm_event_summarizer import LlmEventSummarizer as S
from google.adk.events.event import Event
from google.adk.flows.llm_flows.prompt import _identity
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest

def part(**kw):
    return types.Part(**kw)
def line(author, p):
    return S(llm=None)._format_events_for_prompt(
        [Event(author=author, content=types.Content(role="user", parts=[p]))])
text = line("\x01", part(text="\x02"))
thought = line("\x01", part(text="\x02", thought=True))
call = line("\x01", part(function_call=types.FunctionCall(name="\x03", args={"a": 1})))
response = line("\x01", part(function_response=types.FunctionResponse(name="\x03", response={"a": 1})))
cap = S._MAX_TOOL_CONTENT_CHARS
cut = S(llm=None)._truncate("x" * (cap + 7))
assert cut.startswith("x" * cap)
agent = LlmAgent(name="NAME_MARK", model="m")
request = LlmRequest()
async def identity():
    async for _ in _identity.request_processor.run_async(SimpleNamespace(agent=agent), request):
        pass
asyncio.run(identity())
ended = LlmRequest(contents=[types.Content(role="model", parts=[part(text="x")])])
BaseLlm._maybe_append_user_content(SimpleNamespace(), ended)
print(json.dumps({
    "version": version("google-adk"),
    "prompt_template": S._DEFAULT_PROMPT_TEMPLATE,
    "tool_content_chars": cap,
    "text_line": text.replace("\x01", "{author}").replace("\x02", "{text}"),
    "thought_line": thought.replace("\x01", "{author}").replace("\x02", "{text}"),
    "call_line": call.replace("\x01", "{author}").replace("\x03", "{name}").replace(str({"a": 1}), "{args}"),
    "response_line": response.replace("\x03", "{name}").replace(str({"a": 1}), "{response}"),
    "truncated_notice": cut[cap:].replace("7", "{dropped}"),
    "identity": request.config.system_instruction.replace("NAME_MARK", "{name}"),
    "continuation": ended.contents[-1].parts[0].text,
}))
"""


@dataclass(frozen=True, slots=True, kw_only=True)
class AdkTexts:
    """`LlmEventSummarizer`'s strings and the agent's identity instruction.

    Attributes:
        prompt_template: the summary request (`str.format` with `{conversation_history}`).
        tool_content_chars: each tool call's arguments and each response are cut to this many
            characters in the summary request.
        text_line: an event's text part (`{author}`, `{text}`).
        thought_line: an event's thought part.
        call_line: a function call (`{author}`, `{name}`, `{args}`: the arguments' Python repr).
        response_line: a function response (`{name}`, `{response}`: the response's Python repr).
        truncated_notice: put after a cut tool content (`{dropped}` characters dropped).
        identity: the instruction every agent's system instruction ends with (`{name}`).
        continuation: the user message ADK's model adapters add to a request whose contents end
            with a model turn (`BaseLlm._maybe_append_user_content`).
    """

    prompt_template: str
    tool_content_chars: int
    text_line: str
    thought_line: str
    call_line: str
    response_line: str
    truncated_notice: str
    identity: str
    continuation: str


ENVIRONMENT = Environment(
    texts="google-adk",
    distribution="google-adk",
    version=ADK_VERSION,
    module="google.adk",
    venv=".venv-adk",
    variable="CTXLAB_ADK_PYTHON",
    make="adk-env",
)
"""Google ADK's environment (its pins cannot share the lab's)."""


def interpreter() -> Path:
    """The environment's Python (see `ENVIRONMENT`)."""
    return ENVIRONMENT.interpreter()


@functools.cache
def adk_texts() -> AdkTexts:
    """The package's texts, from the cache or read afresh.

    Raises:
        FileNotFoundError: no environment.
        LookupError: the package cannot be read, or it is not version 2.13.0.
    """
    return AdkTexts(**ENVIRONMENT.read(_READER, Path(__file__)))
