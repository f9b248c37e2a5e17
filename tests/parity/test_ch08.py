"""The ch08 reconstruction has the byte sizes the book's numbers require (no agentscope needed)."""

from __future__ import annotations

import pytest

from ctxlab.core.messages.blocks import ToolResultBlock, utf8_len
from ctxlab.core.messages.tools import tools_bytes
from ctxlab.presets.agentscope.config import ContextConfig, InjectionConfig
from tests.parity.ch08 import (
    RESULT_BYTES,
    RETRIEVE,
    SUMMARY_FIELDS,
    SYSTEM_PROMPT,
    USER_MESSAGE,
    WINDOWS,
    ch08_script,
    ch08_workload,
)

TIME_HINT_BYTES = 272  # AgentScope's default injection of the time alone (InjectionConfig)
TEMPLATE_CHARS = 166  # AgentScope's default summary template without its fields (ContextConfig)


def test_fixed_sizes_fit_the_first_call() -> None:
    assert (utf8_len(SYSTEM_PROMPT), utf8_len(USER_MESSAGE), tools_bytes((RETRIEVE,))) == (26, 27, 250)
    first = utf8_len(SYSTEM_PROMPT) + utf8_len(USER_MESSAGE) + TIME_HINT_BYTES + tools_bytes((RETRIEVE,))
    assert (first + 2) // 4 == 144


def test_every_round_adds_6032_bytes() -> None:
    script = ch08_script()
    calls = list(script.calls())
    assert len(calls) == 6
    for call in calls:
        assert call.result is not None
        result = ToolResultBlock(id="r", name="retrieve", output=call.result)
        assert utf8_len(call.input) + result.tally.nbytes == 6032
        assert result.tally.nbytes == RESULT_BYTES
        assert result.text.isascii()


def test_summary_fields_render_293_characters_in_483_bytes() -> None:
    cjk = sum(1 for text in SUMMARY_FIELDS.values() for ch in text if not ch.isascii())
    ascii_ = sum(1 for text in SUMMARY_FIELDS.values() for ch in text if ch.isascii())
    assert (cjk, ascii_) == (95, 32)
    assert all(utf8_len(ch) == 3 for text in SUMMARY_FIELDS.values() for ch in text if not ch.isascii())
    chars = TEMPLATE_CHARS + cjk + ascii_
    assert (chars, TEMPLATE_CHARS + 3 * cjk + ascii_) == (293, 483)


@pytest.mark.parametrize("window", WINDOWS)
def test_workload_uses_agentscope_defaults_without_workspace(window: int) -> None:
    script, config = ch08_workload(window)
    assert config.context_size == window
    assert config.context == ContextConfig() and config.injection == InjectionConfig()
    assert config.workspace == "none" and not config.task_tools
    assert len(script.turns) == 1 and script.turns[0].final
