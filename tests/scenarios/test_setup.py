"""`make experiments` installs what the shipped scenarios need, and nothing a scenario needs is missed."""

from __future__ import annotations

import re
from pathlib import Path

from ctxlab.experiments.grid import expand
from ctxlab.scenarios.load import load_scenario

ROOT = Path(__file__).resolve().parents[2]
EXTRA_OF_TEXTS = {
    "agentscope": "agentscope",
    "langchain": "peers",
    "strands": "peers",
    "pydantic-ai": "peers",
}
"""The extra that installs the package a text set is read from."""


def run_extras() -> set[str]:
    match = re.search(r"^RUN_EXTRAS := (.+)$", (ROOT / "Makefile").read_text(encoding="utf-8"), re.M)
    assert match, "the Makefile names the extras `make experiments` installs"
    return set(match.group(1).split(","))


def needed_extras(path: Path) -> set[str]:
    loaded = load_scenario(path)
    needed = {"tune"} if loaded.scenario.tune is not None else set()  # `make experiments` tunes it
    for config in expand(loaded):
        model, strategy = config.config["model"], config.config["strategy"]
        if model.get("tokenizer", "agentscope") != "agentscope":
            needed.add("tokenizers")
        texts = strategy.get("texts", "ctxlab")
        if texts != "ctxlab":
            needed.add(EXTRA_OF_TEXTS.get(texts, texts))
    return needed


def test_make_experiments_installs_every_extra_a_shipped_scenario_needs() -> None:
    missing = {
        path.name: needed_extras(path) - run_extras() for path in sorted((ROOT / "scenarios").glob("*.yaml"))
    }
    assert not {name: extras for name, extras in missing.items() if extras}


def scenario(tmp_path: Path, rest: str) -> Path:
    """A small scenario file: a retrieval workload, then `rest` (model, strategies, more)."""
    path = tmp_path / "s.yaml"
    workload = "workload: {generator: {name: retrieval, params: {rounds: 2}}}\n"
    path.write_text(f"name: s\ndescription: d.\n{workload}{rest}", encoding="utf-8")
    return path


def test_the_check_sees_a_tokenizer_and_a_text_set(tmp_path: Path) -> None:
    model = "model: {context_size: 8000, tokenizer: o200k_base}\n"
    rest = model + "strategies: [{preset: agentscope, texts: agentscope}]\n"
    assert needed_extras(scenario(tmp_path, rest)) == {"tokenizers", "agentscope"}


def test_a_tune_section_needs_the_tune_extra(tmp_path: Path) -> None:
    space = "[{preset: agentscope, params: {context.trigger_ratio: {low: 0.5, high: 0.9}}}]"
    rest = f"model: {{context_size: 8000}}\nstrategies: [{{preset: agentscope}}]\ntune: {{space: {space}}}\n"
    assert needed_extras(scenario(tmp_path, rest)) == {"tune"}
