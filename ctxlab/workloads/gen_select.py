"""Generators of the Select layer (what enters the context): put it in, or fetch it just in time.

Two pairs of generators run the same tasks two ways:
- `documents_inline` puts the whole document library into the system prompt and answers each
  question from it; `documents_jit` gives the agent the `read_document` tool and reads only what
  each question needs (the catalog once, then `resolve`, then one `section` when the document is
  over the direct-read limit).
- `artifacts_inline` runs a report pipeline (requirements → raw data → chart data → report) whose
  steps return their whole output, which the agent passes on to the next step in its call;
  `artifacts_by_reference` runs the same pipeline with every step returning an artifact
  reference (checksum and size, no payload) and passing ids on, and fetches only the report's
  payload (`fetch_artifact`) before answering.

Invariants (see `ctxlab.workloads.generators` for the registry):
- Pure functions of their validated parameters and a seed; payload and message sizes are exact
  UTF-8 byte counts.
- The reader and fetch calls have no scripted result: the world's built-in tools answer them,
  from the script's own `documents` (the built-in library) and `artifacts`.
- Both styles of a pair ask the same questions or build the same artifacts for the same
  parameters and seed.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ctxlab.core.messages.blocks import TextBlock
from ctxlab.core.messages.tools import ToolSchema
from ctxlab.core.world.artifacts import FETCH_ARTIFACT, Artifact, fetch_schema, reference_text
from ctxlab.core.world.documents import MAX_DIRECT_CHARS, READ_DOCUMENT, Document, reader_schema
from ctxlab.core.world.library import builtin_library
from ctxlab.core.world.script import Script, ScriptedCall, ScriptedRound, ScriptedTurn
from ctxlab.workloads.build import GeneratorParams, call, final_text, sized_text
from ctxlab.workloads.limits import Bytes, Count

QUESTIONS: tuple[tuple[str, str, str], ...] = (
    ("api-ref", "Authentication", "How do I get a new access token when mine expires?"),
    ("api-ref", "Error codes", "What does a 401 answer mean, and what should the client do?"),
    ("runbook", "Database failover", "Which port does the primary database listen on?"),
    ("changelog", "2.4.0", "Which release fixed the webhook retry storm?"),
    ("onboarding", "Who to ask", "Where do I find who is on call this week?"),
    ("api-ref", "Rate limits", "How many requests per minute may one account send?"),
)
"""(document, section, question): each answer is in exactly one section of the library."""


class DocumentsParams(GeneratorParams):
    """Questions answered from the built-in document library, one per turn."""

    questions: Count = Field(default=4, ge=1, description="Turns; the questions cycle through a fixed list.")
    final_bytes: Bytes = Field(default=200, ge=0)
    system_prompt_bytes: Bytes = Field(default=300, ge=0, description="The prompt before any documents.")


def _question_turn(p: DocumentsParams, seed: int, t: int, rounds: tuple[ScriptedRound, ...]) -> ScriptedTurn:
    question = QUESTIONS[t % len(QUESTIONS)][2]
    return ScriptedTurn(
        user=(TextBlock(text=question),), rounds=rounds, final=final_text(seed, t, p.final_bytes)
    )


def documents_inline(p: DocumentsParams, seed: int) -> Script:
    """The whole library in the system prompt; every question answered without a tool call."""
    library = "\n\n".join(doc.text for doc in builtin_library())
    prompt = (
        sized_text(seed, "system_prompt", p.system_prompt_bytes) + "\n\nReference documents:\n\n" + library
    )
    turns = tuple(_question_turn(p, seed, t, ()) for t in range(p.questions))
    return Script(system_prompt=prompt, turns=turns)


def _reads(library: tuple[Document, ...], t: int) -> tuple[ScriptedRound, ...]:
    doc_id, selector, _ = QUESTIONS[t % len(QUESTIONS)]
    rounds = [ScriptedRound(calls=(call(READ_DOCUMENT, {"action": "catalog"}, None),))] if t == 0 else []
    rounds.append(ScriptedRound(calls=(call(READ_DOCUMENT, {"action": "resolve", "doc_id": doc_id}, None),)))
    doc = next(d for d in library if d.id == doc_id)
    if len(doc.text) > MAX_DIRECT_CHARS:
        arguments = {"action": "section", "doc_id": doc_id, "selector": selector}
        rounds.append(ScriptedRound(calls=(call(READ_DOCUMENT, arguments, None),)))
    return tuple(rounds)


def documents_jit(p: DocumentsParams, seed: int) -> Script:
    """The same questions answered by reading the library just in time with `read_document`."""
    library = builtin_library()
    turns = tuple(_question_turn(p, seed, t, _reads(library, t)) for t in range(p.questions))
    return Script(
        system_prompt=sized_text(seed, "system_prompt", p.system_prompt_bytes),
        tools=(reader_schema(),),
        turns=turns,
        documents=library,
    )


STEPS: tuple[tuple[str, str, str], ...] = (
    ("extract_requirements", "requirements", "Extract the report's requirements from the user's request."),
    ("collect_data", "raw_data", "Collect the raw data the requirements name from the database."),
    ("compute_chart_data", "chart_data", "Aggregate raw data into the series of the report's charts."),
    ("generate_report", "report", "Render chart data into the final report."),
)
"""(tool, artifact kind, tool description) of each pipeline step, in order."""


class ArtifactsParams(GeneratorParams):
    """A report pipeline of four steps per turn, each producing an artifact."""

    reports: Count = Field(default=2, ge=1, description="Turns; each builds one report.")
    requirements_bytes: Bytes = Field(default=1_500, ge=1)
    raw_data_bytes: Bytes = Field(default=45_000, ge=1)
    chart_data_bytes: Bytes = Field(default=6_000, ge=1)
    report_bytes: Bytes = Field(default=4_000, ge=1)
    user_bytes: Bytes = Field(default=200, ge=0)
    final_bytes: Bytes = Field(default=300, ge=0)
    system_prompt_bytes: Bytes = Field(default=600, ge=0)

    def payload_bytes(self, kind: str) -> int:
        """The payload size of an artifact kind."""
        sizes = {
            "requirements": self.requirements_bytes,
            "raw_data": self.raw_data_bytes,
            "chart_data": self.chart_data_bytes,
            "report": self.report_bytes,
        }
        return sizes[kind]


def _step_schema(tool: str, description: str, argument: str | None) -> ToolSchema:
    properties: dict[str, Any] = {"request": {"type": "string"}}
    if argument is not None:
        properties = {argument: {"type": "string", "description": "The previous step's output or its id."}}
    return ToolSchema.of(tool, description, {"type": "object", "properties": properties})


def pipeline_schemas() -> tuple[ToolSchema, ...]:
    """The four step tools' schemas (each takes the previous step's output or artifact id)."""
    previous: list[str | None] = [None, *(kind for _, kind, _ in STEPS[:-1])]
    return tuple(_step_schema(tool, text, arg) for (tool, _, text), arg in zip(STEPS, previous, strict=True))


def turn_artifacts(p: ArtifactsParams, seed: int, t: int) -> tuple[Artifact, ...]:
    """The artifacts turn `t` produces, in step order."""
    return tuple(
        Artifact(
            artifact_id=f"art-{t + 1:03d}-{k + 1}",
            task_id=f"report-{t + 1:03d}",
            step_id=tool,
            kind=kind,
            schema_id=f"report.{kind}.v1",
            payload=sized_text(seed, f"turns[{t}].artifacts[{k}]", p.payload_bytes(kind), "json"),
            producer=tool,
        )
        for k, (tool, kind, _) in enumerate(STEPS)
    )


def _pipeline_turn(p: ArtifactsParams, seed: int, t: int, by_reference: bool) -> ScriptedTurn:
    request = sized_text(seed, f"turns[{t}].user", p.user_bytes)
    rounds: list[ScriptedRound] = []
    previous: Artifact | None = None
    for artifact in turn_artifacts(p, seed, t):
        arguments: dict[str, str] = {"request": request[:120]}
        if previous is not None:
            passed = previous.artifact_id if by_reference else previous.payload
            arguments = {previous.kind: passed}
        output = reference_text(artifact) if by_reference else artifact.payload
        rounds.append(ScriptedRound(calls=(call(artifact.step_id, arguments, (TextBlock(text=output),)),)))
        previous = artifact
    if by_reference and previous is not None:
        fetch: ScriptedCall = call(FETCH_ARTIFACT, {"artifact_id": previous.artifact_id}, None)
        rounds.append(ScriptedRound(calls=(fetch,)))
    return ScriptedTurn(
        user=(TextBlock(text=request),), rounds=tuple(rounds), final=final_text(seed, t, p.final_bytes)
    )


def artifacts_inline(p: ArtifactsParams, seed: int) -> Script:
    """The report pipeline with every product in the context, passed on by the agent."""
    return Script(
        system_prompt=sized_text(seed, "system_prompt", p.system_prompt_bytes),
        tools=pipeline_schemas(),
        turns=tuple(_pipeline_turn(p, seed, t, False) for t in range(p.reports)),
    )


def artifacts_by_reference(p: ArtifactsParams, seed: int) -> Script:
    """The same pipeline passing artifact references; only the report's payload is fetched."""
    return Script(
        system_prompt=sized_text(seed, "system_prompt", p.system_prompt_bytes),
        tools=(*pipeline_schemas(), fetch_schema()),
        turns=tuple(_pipeline_turn(p, seed, t, True) for t in range(p.reports)),
        artifacts=tuple(a for t in range(p.reports) for a in turn_artifacts(p, seed, t)),
    )
