"""The fake world's Select-layer tools through the engine: the document reader and artifacts."""

from __future__ import annotations

import json
from dataclasses import replace

from ctxlab.core.world.artifacts import Artifact, reference_text
from ctxlab.core.world.documents import MAX_DIRECT_CHARS, Document
from ctxlab.core.world.library import builtin_library
from ctxlab.core.world.script import ScriptedRound
from ctxlab.presets.none.preset import NoStrategy
from ctxlab.workloads.generators import generate
from tests.zoo.runs import one_turn, results_of, run, tool_call


def read_call(**arguments: object) -> ScriptedRound:
    return ScriptedRound(calls=(tool_call("read_document", json.dumps(arguments), None),))


def test_the_reader_answers_every_level_from_the_builtin_library() -> None:
    script = one_turn(
        read_call(action="catalog"),
        read_call(action="resolve", doc_id="api-ref"),
        read_call(action="section", doc_id="api-ref", selector="Error codes"),
        read_call(action="resolve", doc_id="runbook"),
        read_call(action="search", query="5432", limit=1),
        read_call(action="section", doc_id="api-ref", selector="Nothing"),
    )
    catalog, big, errors, small, hits, missing = results_of(run(NoStrategy(), script))
    assert [d["id"] for d in json.loads(catalog.text)] == [d.id for d in builtin_library()]
    assert json.loads(big.text)["requires_section"] is True and "content" not in json.loads(big.text)
    assert "401 Unauthorized" in json.loads(errors.text)["content"]
    assert json.loads(small.text)["content"] == builtin_library()[3].text
    assert json.loads(hits.text)[0]["section"] == "Database failover"
    assert missing.state == "error" and json.loads(missing.text)["error"] == "SECTION_NOT_FOUND"


def test_a_script_brings_its_own_documents() -> None:
    script = one_turn(read_call(action="resolve", doc_id="mine"))
    script = replace(script, documents=(Document(id="mine", text="# Mine\n" + "y" * MAX_DIRECT_CHARS),))
    (answer,) = results_of(run(NoStrategy(), script))
    assert json.loads(answer.text)["title"] == "Mine" and json.loads(answer.text)["requires_section"]


def test_fetching_returns_the_payload_byte_for_byte_and_errors_on_unknown_ids() -> None:
    made = Artifact(artifact_id="art-1", task_id="t", step_id="s", kind="raw_data", payload='{"é": [1, 2]}')
    script = one_turn(
        ScriptedRound(calls=(tool_call("fetch_artifact", '{"artifact_id": "art-1"}', None),)),
        ScriptedRound(calls=(tool_call("fetch_artifact", '{"artifact_id": "art-2"}', None),)),
    )
    fetched, unknown = results_of(run(NoStrategy(), replace(script, artifacts=(made,))))
    assert fetched.text == made.payload and fetched.state == "success"
    assert unknown.state == "error" and "art-2" in unknown.text


def test_jit_reading_sends_smaller_requests_than_the_library_in_the_context() -> None:
    inline = run(NoStrategy(), generate("documents_inline", {"questions": 6}).script)
    jit = run(NoStrategy(), generate("documents_jit", {"questions": 6}).script)
    # More calls (catalog, resolve, section), each far smaller than one request carrying the library.
    assert len(jit.outcome.calls) > 2 * len(inline.outcome.calls)
    assert max(jit.reasoning()) < min(inline.reasoning()) / 2
    assert jit.total() < inline.total()
    answers = [r.text for r in results_of(jit) if "section" in json.loads(r.text) or "content" in r.text]
    assert any("POST /auth/refresh" in a for a in answers) and any("5432" in a for a in answers)


def test_references_keep_payloads_out_of_the_context() -> None:
    inline = run(NoStrategy(), generate("artifacts_inline").script)
    by_reference = run(NoStrategy(), generate("artifacts_by_reference").script)
    assert by_reference.total() < inline.total() / 5
    script = generate("artifacts_by_reference").script
    results = results_of(by_reference)
    steps = [r.text for r in results if r.name != "fetch_artifact"]
    assert steps == [reference_text(a) for a in script.artifacts]
    fetched = [r.text for r in results if r.name == "fetch_artifact"]
    assert fetched == [a.payload for a in script.artifacts if a.kind == "report"]
