"""Tool groups and skills against the real agentscope 2.0.11 `Toolkit`, call for call: on
generated workloads the lab sends the same tools (by name, in order) and the same messages
(text for text) in every reasoning request, with the same tokens under every convention, and ends
with the same context."""

from __future__ import annotations

import pytest
from hypothesis import event, given

from ctxlab.core.agentscope.formatter import DataTexts, sent_context
from ctxlab.core.messages.blocks import ToolResultBlock, block_kind, text_pieces
from ctxlab.core.messages.message import Message
from ctxlab.core.wire.views import to_openai
from ctxlab.core.world.script import Script
from ctxlab.texts import agentscope_texts
from tests.parity.spec import ParityConfig
from tests.parity.test_engine_parity import compare
from tests.parity.test_sent_parity import sent_form
from tests.parity.workloads import toolkit_cases

pytest.importorskip("agentscope", reason="parity needs the 'peers' extra")


def contents(messages: tuple[Message, ...]) -> list[tuple[str, list[tuple[str, tuple[str, ...]]]]]:
    """Role and each block's kind and text pieces: a request without its ids."""
    return [(m.role, [(block_kind(b), tuple(text_pieces(b))) for b in m.blocks]) for m in messages]


@given(toolkit_cases())
def test_tool_groups_and_skills_match_agentscope_call_for_call(case: tuple[Script, ParityConfig]) -> None:
    ours, theirs = compare(*case)
    mine, real = ours.of_kind("reasoning"), theirs.of_kind("reasoning")
    assert [c.tools for c in mine] == [c.tools for c in real]
    texts = DataTexts.of(agentscope_texts())
    for a, b in zip(mine, real, strict=True):
        # the lab records a request as sent: a result holding media as the formatter writes it
        assert contents(a.request) == contents(sent_context(b.request, texts))
        assert sent_form(to_openai(a.request)) == sent_form(b.sent)
    for label in set().union(*(kinds_of_results(c.request) for c in real)):
        event(label)


MARKERS = {
    "ToolGroupInactiveError": "a call of an inactive tool",
    "Invalid group name": "an unknown group name",
    "<tool-instructions>": "activated instructions",
    "currently activated tool group": "an activation",
    "All tool groups are currently deactivated": "everything deactivated",
    "SkillNotFoundError": "an unknown skill",
    "# Skill ": "a skill read",
}


def kinds_of_results(messages: tuple[Message, ...]) -> set[str]:
    """Which toolkit answers `messages` hold (for the test's statistics)."""
    found = set()
    for message in messages:
        for block in message.blocks:
            if isinstance(block, ToolResultBlock):
                text = "".join(text_pieces(block))
                found |= {label for marker, label in MARKERS.items() if marker in text}
    return found
