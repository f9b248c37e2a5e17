"""Scenario files for the tune tests: a small coding workload whose grid is enumerable."""

from __future__ import annotations

WORKLOAD = """\
workload:
  probes:
    - {kind: rule, key: no-force-push, value: "Never force-push to the main branch.", where: "turn 0 user"}
    - {kind: fact, key: db-port, value: "The test database listens on port 5433.", where: "turn 1 round 0"}
  generator: {name: swe_loop, params: {turns: 4, cycles: 3}}
model: {context_size: 8000, summarizer: {kind: extractive}}
"""

TRIGGERS = [0.5, 0.6, 0.7, 0.8, 0.9]
RESERVES = [0.05, 0.1, 0.2, 0.3]
BUDGETS = [4000, 6000, 8000]

TUNED = f"""\
name: coding
description: A small coding session tuned over an enumerable space.
{WORKLOAD}strategies:
  - {{name: agentscope, preset: agentscope}}
tune:
  constraints: {{providers: [openai, anthropic], over_window: 0, retention: 0.8}}
  trials: 12
  space:
    - preset: agentscope
      params:
        context.trigger_ratio: {{choices: {TRIGGERS}}}
        context.reserve_ratio: {{choices: {RESERVES}}}
    - preset: nonoka
      params: {{budget.max_tokens: {{choices: {BUDGETS}}}}}
"""

GRID = f"""\
name: coding-grid
description: Every point of the tuned space, run.
{WORKLOAD}strategies:
  - {{name: agentscope, preset: agentscope}}
  - {{name: nonoka, preset: nonoka}}
sweep:
  strategies.agentscope.context.trigger_ratio: {TRIGGERS}
  strategies.agentscope.context.reserve_ratio: {RESERVES}
  strategies.nonoka.budget.max_tokens: {BUDGETS}
"""

RANGES = f"""\
name: ranges
{WORKLOAD}strategies:
  - {{name: agentscope, preset: agentscope}}
tune:
  objective: total_input_tokens
  constraints: {{retention: 0.8}}
  trials: 4
  seed: 3
  space:
    - preset: agentscope
      fixed: {{workspace: none}}
      params:
        context.trigger_ratio: {{low: 0.5, high: 0.9}}
        context.reserve_ratio: {{low: 0.02, high: 0.4, log: true}}
        context.tool_result_limit: {{low: 2000, high: 12000, step: 1000}}
"""

INFEASIBLE = f"""\
name: hopeless
{WORKLOAD}strategies:
  - {{name: none, preset: none}}
tune:
  trials: 3
  space:
    - preset: none
    - preset: sliding-window
      params: {{min_messages: {{low: 1, high: 6}}}}
"""
