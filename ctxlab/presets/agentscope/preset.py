"""The `agentscope` preset as the registry lists it."""

from __future__ import annotations

from ctxlab.presets.agentscope.entry import AgentScopeEntry, agentscope_params
from ctxlab.presets.agentscope.strategy import AgentScopeParams, AgentScopeStrategy
from ctxlab.presets.preset import EMPTY_SYSTEM_MESSAGE, Preset
from ctxlab.texts import Texts

SOURCE = "agentscope 2.0.11, agent/_agent.py and agent/_config.py"


def build(params: AgentScopeParams, texts: Texts) -> AgentScopeStrategy:
    """The `agentscope` strategy."""
    return AgentScopeStrategy(texts=texts, params=params)


PRESET = Preset(
    name="agentscope",
    summary="AgentScope 2.0.11: tool-result truncation and offload, image cap, structured-summary "
    "compression with a protocol-aware split, runtime-state injection, task tools",
    source=SOURCE,
    params=AgentScopeParams,
    build=build,
    entry=AgentScopeEntry,
    from_entry=agentscope_params,
    peers=("agentscope",),
    no_system=f"{EMPTY_SYSTEM_MESSAGE} (the agent always writes one)",
    assistant_first="a summary request sends the span it compresses after the system prompt, and that "
    "span may begin with an assistant turn",
    notes=(
        "a negative context.tool_result_limit is refused at load: AgentScope takes it, offloads "
        "every result as 0 does and fails on a result with no output (declared in row 28)",
        "thinking is counted by the estimator for the trigger and left out of requests (and so of "
        "input_tokens), as AgentScope's OpenAI chat formatter does; its DeepSeek formatter's "
        "reasoning_content replay is not reproduced (row 57)",
        "a tool result holding media is sent as AgentScope's OpenAI chat formatter sends it, in reasoning "
        "and summary requests: one text, each medium named by an identifier and listed after the results "
        "in a reminder (its texts the text set's), and input_tokens count those texts; no message "
        "carries AgentScope's `name` (row 58)",
        "a recorded time is read back as on a host whose zone is UTC: a time_format's %Z reads UTC and "
        "GMT alone, where AgentScope's strptime also reads the host's own zone names (row 38)",
    ),
)
