"""The OpenHands SDK's texts (`texts: openhands`), read from the installed package at run time.

`openhands-sdk==1.58.2` needs Python >= 3.12, so it lives in an environment of its own (`make
openhands-env` creates `.venv-openhands`; `CTXLAB_OPENHANDS_PYTHON` names another interpreter).
The texts are rendered there by the SDK itself (its summary prompt templates, its event preview
length, the properties it adds to every tool) and read back as JSON into the lab's text cache
(`ctxlab.texts.cache`), keyed by the SDK's files, so the slow import is paid once per install.

Invariant: nothing of the SDK is stored in the project; a missing environment is an error that
names the fix.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from ctxlab.texts.elsewhere import Environment

SDK_VERSION = "1.58.2"

_READER = r"""
import json, os
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("OPENHANDS_SUPPRESS_BANNER", "1")
import logging
logging.disable(logging.CRITICAL)
from importlib.metadata import version
from pydantic import Field, create_model
from openhands.sdk.agent.agent import _non_multimodal_image_message
from openhands.sdk.context.condenser import llm_summarizing_condenser as module
from openhands.sdk.context.prompts import render_template
from openhands.sdk.event.base import N_CHAR_PREVIEW
from openhands.sdk.tool import Action, Observation, ToolDefinition
from openhands.sdk.utils.truncate import DEFAULT_TRUNCATE_NOTICE

folder = os.path.join(os.path.dirname(module.__file__), "prompts")
def events(items):
    return render_template(folder, "summarizing_events.j2", events=items)
MODEL = "test-model"
none, one, two = events([]), events(["\x00"]), events(["\x00", "\x01"])
head, rest = one.split("\x00")
close = two.split("\x00")[1].split(head + "\x01")[0]
final = rest[len(close):]
assert (head + "\x00" + close + head + "\x01" + close + final).strip() == two
assert final.strip() == none

class ProbeAction(Action):
    x: str = Field(description="X.")
class ProbeObservation(Observation):
    pass
class ProbeTool(ToolDefinition):
    @classmethod
    def create(cls, conv_state=None, **params):
        return [cls(description="Probe.", action_type=ProbeAction, observation_type=ProbeObservation)]
tool = ProbeTool.create()[0].to_openai_tool(add_security_risk_prediction=True)
added = {k: v for k, v in tool["function"]["parameters"]["properties"].items() if k != "x"}
print(json.dumps({
    "version": version("openhands-sdk"),
    "summarizing_system": render_template(folder, "summarizing_system.j2"),
    "event_open": head,
    "event_close": close,
    "events_end": final,
    "preview_chars": N_CHAR_PREVIEW,
    "error_header": Observation.ERROR_MESSAGE_HEADER,
    "truncate_notice": DEFAULT_TRUNCATE_NOTICE,
    "added_properties": json.dumps(added),
    "image_refusal": _non_multimodal_image_message(MODEL).content[0].text,
}))
"""


@dataclass(frozen=True, slots=True, kw_only=True)
class OpenHandsTexts:
    """The condenser's strings and the SDK's rendering constants.

    Attributes:
        summarizing_system: the system message of a summary request.
        event_open: written before each event of the user message.
        event_close: written after each event.
        events_end: written after the last event (the whole message is then stripped).
        preview_chars: the event previews' length (`N_CHAR_PREVIEW`).
        error_header: put before a failed tool's result.
        truncate_notice: put in the middle of a text cut short: an event during a hard reset, a
            tool result over the limit in every request.
        added_properties: the properties (JSON object) the SDK adds in front of every tool's own.
        image_refusal: the agent's answer, given in the model's place, when the latest user
            message holds an image and the model has no vision (the SDK's names `test-model`,
            the model the presets stand for).
    """

    summarizing_system: str
    event_open: str
    event_close: str
    events_end: str
    preview_chars: int
    error_header: str
    truncate_notice: str
    added_properties: str
    image_refusal: str


ENVIRONMENT = Environment(
    texts="openhands",
    distribution="openhands-sdk",
    version=SDK_VERSION,
    module="openhands",
    subfolder="sdk",
    venv=".venv-openhands",
    variable="CTXLAB_OPENHANDS_PYTHON",
    make="openhands-env",
    requirement="a Python >= 3.12 environment",
    env={"LITELLM_LOCAL_MODEL_COST_MAP": "True", "OPENHANDS_SUPPRESS_BANNER": "1"},
)
"""The OpenHands SDK's environment (it needs Python >= 3.12; its import reaches for the network
unless LiteLLM is told to use its local cost map)."""


def interpreter() -> Path:
    """The environment's Python (see `ENVIRONMENT`)."""
    return ENVIRONMENT.interpreter()


@functools.cache
def openhands_texts() -> OpenHandsTexts:
    """The package's texts, from the cache or read afresh.

    Raises:
        FileNotFoundError: no environment.
        LookupError: the package cannot be read, or it is not version 1.58.2.
    """
    return OpenHandsTexts(**ENVIRONMENT.read(_READER, Path(__file__)))
