"""A run's fake models keep none of the requests they answer: each request holds its whole
context, so a log of them all would grow with calls x context (a long run without context
management reached a gigabyte); models built directly (tests, notebooks) keep them."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxlab.core.world.script import Script, assign_call_ids
from ctxlab.experiments.execute import RunSpec, agent_for
from ctxlab.experiments.grid import expand
from ctxlab.models.scripted import ScriptModel
from ctxlab.scenarios.load import load_scenario
from ctxlab.texts import load_texts
from tests.scenarios.files import write

SCENARIO = """\
name: kept
workload:
  generator: {name: swe_loop, params: {turns: 1, cycles: 1}}
model:
  context_size: 16000
  agent: {kind: AGENT}
  summarizer: {kind: SUMMARIZER}
strategies:
  - preset: none
"""


@pytest.mark.parametrize(("agent", "summarizer"), [("script", "fixed"), ("policy", "extractive")])
def test_a_runs_models_keep_no_requests(tmp_path: Path, agent: str, summarizer: str) -> None:
    text = SCENARIO.replace("AGENT", agent).replace("SUMMARIZER", summarizer)
    (config,) = expand(load_scenario(write(tmp_path, text)))
    spec = RunSpec.model_validate({**config.config, "files": config.files})
    workload = spec.workload.build(spec.seed, spec.files)
    texts = load_texts(spec.strategy.texts)
    model = agent_for(spec, assign_call_ids(workload.script), workload, texts).model
    built = spec.model.summarizer.build(texts=texts, probes=workload.probes, seed=spec.seed)
    assert getattr(model, "requests", ()) is None and getattr(built, "requests", ()) is None


def test_a_model_built_directly_keeps_its_requests() -> None:
    assert ScriptModel(Script(system_prompt="s", tools=(), turns=())).requests == []
