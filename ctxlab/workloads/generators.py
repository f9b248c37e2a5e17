"""The registry of named workload generators, and how a scenario names one.

Invariants:
- `GENERATORS` maps each name to a `Generator`: a summary, a pydantic parameter model with
  defaults (unknown keys rejected), and a pure build function of (parameters, seed).
- `generate(name, params, seed=...)` validates the parameters, builds the script and plants the
  parameters' probes; the same name, parameters and seed give an identical result.
- Unknown names fail with the known names and a "did you mean"; bad parameters fail with one
  located problem each, under `params`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import Field, ValidationError, model_validator

from ctxlab.core.world.script import Script
from ctxlab.problems import Problem, WorkloadError, describe_errors, located_error, unknown_name
from ctxlab.workloads import gen_agents, gen_context, gen_isolate, gen_select
from ctxlab.workloads.build import GeneratorParams
from ctxlab.workloads.content import Spec
from ctxlab.workloads.probes import Planted, plant


@dataclass(frozen=True, slots=True, kw_only=True)
class Generator:
    """A named generator: its parameter model and its build function."""

    name: str
    summary: str
    params: type[GeneratorParams]
    build: Callable[[Any, int], Script]

    def parse(self, params: Mapping[str, Any] | GeneratorParams | None = None) -> GeneratorParams:
        """Validated parameters (defaults for what is not given).

        Raises:
            WorkloadError: one problem per bad parameter, at `params.<name>`.
        """
        if isinstance(params, GeneratorParams):
            return params
        try:
            return self.params.model_validate(dict(params or {}))
        except ValidationError as error:
            raise WorkloadError(
                describe_errors(error, prefix=("params",)), source=f"generator {self.name}"
            ) from None

    def __call__(
        self, params: Mapping[str, Any] | GeneratorParams | None = None, *, seed: int = 0
    ) -> Planted:
        """The script for `params` and `seed`, with the parameters' probes planted."""
        parsed = self.parse(params)
        script = self.build(parsed, seed)
        try:
            return plant(script, [probe.probe() for probe in parsed.probes])
        except WorkloadError as error:
            problems = [Problem(loc=("params", *p.loc), message=p.message) for p in error.problems]
            raise WorkloadError(problems, source=f"generator {self.name}") from None


def _entry(name: str, params: type[GeneratorParams], build: Callable[[Any, int], Script]) -> Generator:
    summary = (build.__doc__ or "").strip().splitlines()[0]
    return Generator(name=name, summary=summary, params=params, build=build)


GENERATORS: dict[str, Generator] = {
    g.name: g
    for g in (
        _entry("retrieval", gen_context.RetrievalParams, gen_context.retrieval),
        _entry("repeated_reads", gen_context.RepeatedReadsParams, gen_context.repeated_reads),
        _entry("huge_read", gen_context.HugeReadParams, gen_context.huge_read),
        _entry("parallel_batches", gen_context.ParallelBatchesParams, gen_context.parallel_batches),
        _entry("failing_retries", gen_context.FailingRetriesParams, gen_context.failing_retries),
        _entry("chinese_turns", gen_context.ChineseTurnsParams, gen_context.chinese_turns),
        _entry("images", gen_context.ImagesParams, gen_context.images),
        _entry("task_list", gen_agents.TaskListParams, gen_agents.task_list),
        _entry("swe_loop", gen_agents.SweLoopParams, gen_agents.swe_loop),
        _entry("customer_service", gen_agents.CustomerServiceParams, gen_agents.customer_service),
        _entry("long_conversation", gen_agents.LongConversationParams, gen_agents.long_conversation),
        _entry("documents_inline", gen_select.DocumentsParams, gen_select.documents_inline),
        _entry("documents_jit", gen_select.DocumentsParams, gen_select.documents_jit),
        _entry("artifacts_inline", gen_select.ArtifactsParams, gen_select.artifacts_inline),
        _entry("artifacts_by_reference", gen_select.ArtifactsParams, gen_select.artifacts_by_reference),
        _entry("many_tools", gen_isolate.ManyToolsParams, gen_isolate.many_tools),
        _entry("delegated_research", gen_isolate.DelegatedResearchParams, gen_isolate.delegated_research),
    )
}


def unknown_generator(name: str) -> str:
    """The message for an unknown generator name."""
    return unknown_name("generator", name, GENERATORS)


def get_generator(name: str) -> Generator:
    """The generator called `name`.

    Raises:
        WorkloadError: no such generator (with the known names and a suggestion).
    """
    if name not in GENERATORS:
        raise WorkloadError([Problem(loc=("name",), message=unknown_generator(name))])
    return GENERATORS[name]


def generate(name: str, params: Mapping[str, Any] | None = None, *, seed: int = 0) -> Planted:
    """The script of generator `name` with `params` (defaults elsewhere) and `seed`, probes planted.

    >>> planted = generate("retrieval", {"rounds": 2}, seed=1)
    >>> [len(c.result[0].text) for c in planted.script.calls()]
    [6012, 6012]
    """
    return get_generator(name)(params, seed=seed)


class GeneratorSpec(Spec):
    """A scenario's `generator:` section: `{name: retrieval, params: {rounds: 6}}`."""

    name: str
    params: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _known(self) -> GeneratorSpec:
        if self.name not in GENERATORS:
            raise located_error("GeneratorSpec", [(("name",), unknown_generator(self.name), self.name)])
        try:
            GENERATORS[self.name].params.model_validate(self.params)
        except ValidationError as error:
            problems = [(p.loc, p.message, None) for p in describe_errors(error, prefix=("params",))]
            raise located_error("GeneratorSpec", problems) from None
        return self

    def generate(self, seed: int) -> Planted:
        """The generated, planted script."""
        return generate(self.name, self.params, seed=seed)

    def resolved_params(self) -> dict[str, Any]:
        """The parameters with the generator's defaults filled in, as JSON data (what a run's
        config holds)."""
        params: dict[str, Any] = GENERATORS[self.name].parse(self.params).model_dump(mode="json")
        return params
