"""The benchmark workload: replies of one `retrieve` call with a 4,000-byte result, then an answer.

Window 32,768 and AgentScope's defaults, as issue 9 fixes them, so the real agent and the lab
run the very same script.
"""

from __future__ import annotations

import json

from ctxlab.core.messages.blocks import TextBlock
from ctxlab.core.messages.tools import ToolSchema
from ctxlab.core.world.script import Script, ScriptedCall, ScriptedRound, ScriptedTurn, assign_call_ids

WINDOW = 32_768
RESULT_BYTES = 4_000
TOOL = ToolSchema.of(
    "retrieve",
    "Retrieve passages matching a query.",
    {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
)
PASSAGE = "Context engineering keeps long-running agents inside their window. "


def replies(n: int) -> Script:
    """`n` replies: each one retrieve call (4,000-byte result) and a final answer."""
    body = (PASSAGE * (RESULT_BYTES // len(PASSAGE) + 1))[:RESULT_BYTES]
    turns = tuple(
        ScriptedTurn(
            user=(TextBlock(text=f"Question {i}: what do the sources say?"),),
            rounds=(
                ScriptedRound(
                    calls=(
                        ScriptedCall(
                            tool="retrieve",
                            input=json.dumps({"query": f"question {i}"}),
                            result=(TextBlock(text=body),),
                        ),
                    )
                ),
            ),
            final=f"Answer {i}.",
        )
        for i in range(n)
    )
    return assign_call_ids(Script(system_prompt="You are a research assistant.", tools=(TOOL,), turns=turns))


def scenario_file(n: int, fields: dict[str, str]) -> str:
    """The same `n` replies as a user writes them: a scenario file whose results are `{bytes: N}`
    filler, run with AgentScope's texts and a fixed summarizer answering `fields`."""
    tool = json.dumps(
        {"name": TOOL.name, "description": TOOL.description, "parameters": json.loads(TOOL.parameters)}
    )
    lines = [
        "name: bench-user-path",
        "description: Replies of one retrieve call with a 4,000-byte result, then an answer.",
        "workload:",
        "  script:",
        '    system_prompt: "You are a research assistant."',
        f"    tools: [{tool}]",
        "    turns:",
    ]
    for i in range(n):
        lines += [
            f'      - user: "Question {i}: what do the sources say?"',
            f"        rounds: [{{calls: [{{tool: retrieve, input: {{query: question {i}}}, "
            f"result: {{bytes: {RESULT_BYTES}}}}}]}}]",
            f'        final: "Answer {i}."',
        ]
    summarizer = json.dumps({"kind": "fixed", "fields": fields})
    lines += [
        f"model: {{context_size: {WINDOW}, summarizer: {summarizer}}}",
        "strategies: [{name: agentscope, preset: agentscope, texts: agentscope}]",
    ]
    return "\n".join(lines) + "\n"


def long_reply(rounds: int) -> str:
    """An OpenAI chat transcript (JSONL) of one user turn answered in `rounds` tool rounds, as a
    coding agent works: each round a short text, one `read_file` call and a 20-line result."""
    lines: list[dict[str, object]] = [
        {"role": "system", "content": "You are a coding agent."},
        {"role": "user", "content": "Fix the bug in the parser."},
    ]
    for i in range(rounds):
        call = {"name": "read_file", "arguments": json.dumps({"path": f"src/mod{i}.py"})}
        lines.append(
            {
                "role": "assistant",
                "content": f"Step {i}: reading more.",
                "tool_calls": [{"id": f"call_{i}", "type": "function", "function": call}],
            }
        )
        lines.append({"role": "tool", "tool_call_id": f"call_{i}", "content": "line of code\n" * 20})
    return "".join(json.dumps(line) + "\n" for line in lines)


def many_turns(turns: int) -> str:
    """An OpenAI chat transcript (JSONL) of `turns` user turns, each answered as a coding agent
    answers a question: one `read_file` call, its 20-line result and a short answer. Unlike
    `long_reply`, the history grows by whole messages, so a preset that keeps it all and edits
    only the requests (clearing, windows) reads a longer history at every call."""
    lines: list[dict[str, object]] = [{"role": "system", "content": "You are a coding agent."}]
    for i in range(turns):
        call = {"name": "read_file", "arguments": json.dumps({"path": f"src/mod{i}.py"})}
        lines += [
            {"role": "user", "content": f"What does src/mod{i}.py do?"},
            {
                "role": "assistant",
                "content": "Reading it.",
                "tool_calls": [{"id": f"call_{i}", "type": "function", "function": call}],
            },
            {"role": "tool", "tool_call_id": f"call_{i}", "content": "line of code\n" * 20},
            {"role": "assistant", "content": f"It defines step {i} of the parser."},
        ]
    return "".join(json.dumps(line) + "\n" for line in lines)
