"""`model.agent`: the scripted agent, and the policy agent that re-reads what compression lost."""

from __future__ import annotations

from pathlib import Path

from ctxlab.cli import main
from tests.experiments.test_results import rows, run_to
from tests.scenarios.files import write

POLICY = """\
name: policy
description: A forgotten fact is read back from the offloaded context.
workload:
  generator: {name: retrieval, params: {rounds: 10}}
  probes: [{kind: fact, key: db-port, value: "5432", where: "turn 0 round 1"}]
model:
  context_size: 8000
  summarizer: {kind: extractive, fact_recall: 0.0}
  agent: {kind: policy, needs: [{key: db-port, turn: 0, round: 8}]}
strategies:
  - {name: agentscope, preset: agentscope, context: {tool_result_limit: 2000}}
sweep:
  model.agent.kind: [script, policy]
"""


def test_the_policy_agent_pays_for_what_the_summary_forgot(tmp_path: Path) -> None:
    by_kind = {r["param.model.agent.kind"]: r for r in rows(run_to(tmp_path, POLICY) / "runs.csv")}
    script, policy = by_kind["script"], by_kind["policy"]
    assert int(policy["calls"]) > int(script["calls"])  # the extra Read round(s)
    assert int(policy["total_input_tokens"]) > int(script["total_input_tokens"])


def test_a_need_must_name_a_planted_probe(tmp_path: Path, capsys: object) -> None:
    path = write(tmp_path, POLICY.replace("{key: db-port, turn: 0", "{key: db-host, turn: 0"))
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err  # type: ignore[attr-defined]
    assert "model.agent.needs[0].key" in err and "names no planted probe" in err and "db-port" in err
