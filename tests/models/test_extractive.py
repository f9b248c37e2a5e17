"""The extractive summarizer: each field from hand-made requests, recall per kind, recursion
through the old summary, field caps, determinism, and the shared failure modes."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.core.agentscope.summary import (
    SUMMARY_TOOL,
    StructuredOutputError,
    build_summary_request,
    read_summary_fields,
    render_summary,
    summary_tool,
    with_offload_reminder,
)
from ctxlab.core.messages.blocks import TextBlock, ToolCallBlock, ToolResultBlock
from ctxlab.core.messages.message import Message, text_message
from ctxlab.core.messages.model import ContextOverflowError, ModelError, ModelRequest
from ctxlab.core.world.retention import Probe, probe_found
from ctxlab.models.extractive import ExtractiveSummarizer, keeps
from ctxlab.models.summarizers import FIELDS, FailMode, FixedSummarizer, summary_text_of
from ctxlab.texts import CTXLAB_TEXTS, Texts, fill
from tests.strategies import paired_histories

TEXTS = CTXLAB_TEXTS
TOOL = summary_tool(TEXTS.summary_schema, TEXTS.summary_tool_description)
SCHEMA = TEXTS.schema()
FACT = Probe(kind="fact", key="db-port", value="5432", where="turn 0 round 0")
RULE = Probe(kind="rule", key="no-coauthor", value="Never add Co-Authored-By.", where="turn 0")
ARTIFACT = Probe(kind="artifact", key="trace", value="logs/crash-17.txt", where="turn 0 round 1")
PROBES = (FACT, RULE, ARTIFACT)


def call(cid: str, name: str, args: dict[str, object]) -> ToolCallBlock:
    return ToolCallBlock.of(cid, name, args)


def result(cid: str, name: str, text: str, state: str = "success") -> ToolResultBlock:
    return ToolResultBlock(id=cid, name=name, output=(TextBlock(text=text),), state=state)  # type: ignore[arg-type]


def reply(rid: str, *blocks: ToolCallBlock | ToolResultBlock | TextBlock) -> Message:
    return Message(role="assistant", id=rid, name="agent", blocks=tuple(blocks))


OFFLOADED = fill(TEXTS.tool_result_offload, path="offload/tool-result-0001.txt")
SPAN: tuple[Message, ...] = (
    text_message("user", f"Fix the login bug.\n{RULE.text}\nKeep the API stable.", id="msg-0001"),
    reply(
        "reply-0002",
        call("c1", "Read", {"file_path": "src/login.py"}),
        result("c1", "Read", f"def login():\n{FACT.text}\n    pass"),
        call("c2", "bash", {"command": "pytest -x tests/test_login.py"}),
        result("c2", "bash", "\nFAILED tests/test_login.py::test_ok - AssertionError\nsecond line", "error"),
        call("c3", "grep", {"pattern": "def login", "path": "src"}),
        result("c3", "grep", f"src/login.py:1:def login\n{ARTIFACT.text}\n<<<TRUNCATED>>>{OFFLOADED}"),
        call("c4", "TaskCreate", {"subject": "Write a regression test", "description": "d"}),
        result("c4", "TaskCreate", "Created task 1: Write a regression test"),
        call("c5", "TaskCreate", {"subject": "Update the docs", "description": "d"}),
        result("c5", "TaskCreate", "Task (id=2) created successfully: Update the docs"),
        call("c6", "TaskUpdate", {"task_id": "2", "status": "completed"}),
        result("c6", "TaskUpdate", "Updated task 2: status."),
        call("c7", "Read", {"file_path": "src/login.py"}),
        result("c7", "Read", "again"),
        TextBlock(text="Working on it."),
    ),
    text_message("user", "Also update the changelog.\nThanks.", id="msg-0003"),
)


def request(
    span: Sequence[Message] = SPAN, *, old: str = "", invocation: int = 1, tokens: int = 100
) -> ModelRequest:
    built = build_summary_request(
        system_prompt="You are an agent.",
        old_summary=old,
        compress=span,
        instructions=(),
        prompt=fill(TEXTS.compression_prompt, current_time="2026-01-01T00:00:00 (UTC)"),
        schema_tool=TOOL,
    )
    return ModelRequest(
        kind="summary",
        messages=built.as_sent(TEXTS.structured_output_instruction),
        tools=(TOOL,),
        tool_choice=SUMMARY_TOOL,
        invocation=invocation,
        input_tokens=tokens,
    )


def fields_of(summarizer: ExtractiveSummarizer, req: ModelRequest | None = None) -> dict[str, str]:
    return read_summary_fields(summarizer.respond(req or request()).blocks, SCHEMA)


def test_each_field_extracts_its_part_of_the_request() -> None:
    fields = fields_of(ExtractiveSummarizer(probes=PROBES, field_chars=2000))
    assert fields["task_overview"] == (
        f"- Fix the login bug.\n  {RULE.text}\n  Keep the API stable.\n"
        "- Also update the changelog.\n  Thanks."
    )
    assert fields["current_state"] == (
        "- Read src/login.py\n- bash pytest -x tests/test_login.py\n- grep def login\n"
        "- TaskCreate Write a regression test\n- TaskCreate Update the docs\n- TaskUpdate 2\n"
        "- saved: offload/tool-result-0001.txt"
    )
    assert fields["important_discoveries"] == "- bash: FAILED tests/test_login.py::test_ok - AssertionError"
    assert fields["next_steps"] == "- Write a regression test\n- reply to: Also update the changelog."
    assert fields["context_to_preserve"] == f"{FACT.text}\n{RULE.text}\n{ARTIFACT.text}"


def test_the_system_prompt_and_the_compression_prompt_are_not_requests() -> None:
    fields = fields_of(ExtractiveSummarizer())
    assert "You are an agent." not in json.dumps(fields)
    assert "hand-over summary" not in json.dumps(fields)


def test_empty_parts_say_none() -> None:
    fields = fields_of(ExtractiveSummarizer(), request(span=(text_message("user", "Hi.", id="m1"),)))
    assert fields["current_state"] == fields["important_discoveries"] == "(none)"
    assert fields["context_to_preserve"] == "(none)"
    assert fields["next_steps"] == "- reply to: Hi."


def test_the_same_request_gives_the_same_summary_in_any_order() -> None:
    other = request(span=SPAN[:1])
    first, second = ExtractiveSummarizer(probes=PROBES), ExtractiveSummarizer(probes=PROBES)
    a = [first.respond(request()), first.respond(other)]
    b = [second.respond(other), second.respond(request())]
    assert a == b[::-1]


MANY = tuple(Probe(kind="fact", key=f"fact-{i}", value=f"v{i}x", where="turn 0") for i in range(40))


def many_span() -> tuple[Message, ...]:
    lines = "\n".join(p.text for p in MANY)
    return (reply("r1", call("c1", "Read", {"file_path": "facts.txt"}), result("c1", "Read", lines)),)


@pytest.mark.parametrize("recall", [0.0, 0.5, 1.0])
def test_fact_recall_keeps_exactly_the_probes_hashed_below_it(recall: float) -> None:
    summarizer = ExtractiveSummarizer(probes=MANY, fact_recall=recall, field_chars=5000, seed=3)
    fields = fields_of(summarizer, request(span=many_span()))
    text = "\n".join(fields.values())
    kept = {p.key for p in MANY if probe_found(p, text)}
    assert kept == {p.key for p in MANY if keeps(3, p.key, recall)}
    assert len(kept) == {0.0: 0, 1.0: 40}.get(recall, len(kept))
    if recall == 0.5:
        assert 10 <= len(kept) <= 30  # the hash spreads the keys
        assert fields["context_to_preserve"].splitlines() == [p.text for p in MANY if p.key in kept]


@pytest.mark.parametrize("kind", ["fact", "rule", "artifact"])
def test_each_kind_has_its_own_recall(kind: str) -> None:
    recalls = {f"{k}_recall": 1.0 if k == kind else 0.0 for k in ("fact", "rule", "artifact")}
    fields = fields_of(ExtractiveSummarizer(probes=PROBES, field_chars=2000, **recalls))  # type: ignore[arg-type]
    text = "\n".join(fields.values())
    assert {p.kind for p in PROBES if probe_found(p, text)} == {kind}


def test_a_forgotten_probe_leaves_no_line_anywhere() -> None:
    fields = fields_of(
        ExtractiveSummarizer(probes=PROBES, fact_recall=0.0, rule_recall=0.0, artifact_recall=0.0)
    )
    assert not any(probe_found(p, value) for p in PROBES for value in fields.values())
    assert "Keep the API stable." in fields["task_overview"]  # the rest of the request stays


@given(st.integers(0, 10**6), st.text(min_size=1, max_size=20))
def test_keeping_is_monotone_in_recall(seed: int, key: str) -> None:
    assert keeps(seed, key, 1.0) and not keeps(seed, key, 0.0)
    assert not keeps(seed, key, 0.3) or keeps(seed, key, 0.7)


def rendered(fields: dict[str, str], texts: Texts = TEXTS, path: str = "offload/context-0001.json") -> str:
    summary = render_summary(texts.summary_template, fields)
    reminder = fill(texts.context_offload_reminder, path=path)
    result = with_offload_reminder(summary, reminder)
    assert isinstance(result, str)
    return result


def test_summaries_are_recursive_through_what_the_old_one_preserved() -> None:
    summarizer = ExtractiveSummarizer(probes=PROBES)
    old = rendered(fields_of(summarizer))
    later = (text_message("user", "Next, ship it.", id="msg-0009"),)
    fields = fields_of(summarizer, request(span=later, old=old, invocation=2))
    preserved = fields["context_to_preserve"].splitlines()
    assert preserved[:3] == [FACT.text, RULE.text, ARTIFACT.text]
    assert fill(TEXTS.context_offload_reminder, path="offload/context-0001.json") in preserved
    assert fields["task_overview"] == "- Next, ship it."  # only the preserved part carries over
    third = fields_of(summarizer, request(span=later, old=rendered(fields, path="offload/context-0002.json")))
    assert {"offload/context-0001.json", "offload/context-0002.json"} <= {
        p
        for line in third["context_to_preserve"].splitlines()
        for p in line.split("'")
        if p.startswith("off")
    }


def test_a_summarizer_that_forgets_a_probe_drops_it_from_a_carried_summary() -> None:
    old = rendered(fields_of(ExtractiveSummarizer(probes=PROBES)))
    forgetful = ExtractiveSummarizer(probes=PROBES, rule_recall=0.0)
    fields = fields_of(forgetful, request(span=SPAN[2:], old=old))
    assert not probe_found(RULE, fields["context_to_preserve"])
    assert probe_found(FACT, fields["context_to_preserve"])


def test_an_old_summary_it_cannot_read_is_carried_whole() -> None:
    fields = fields_of(ExtractiveSummarizer(), request(span=SPAN[2:], old=TEXTS.truncated_summary))
    assert fields["context_to_preserve"] == TEXTS.truncated_summary


def test_recursion_with_agentscope_texts() -> None:
    from ctxlab.texts import agentscope_texts

    texts = agentscope_texts()
    summarizer = ExtractiveSummarizer.for_texts(texts, probes=PROBES)
    old = rendered(fields_of(summarizer), texts)
    fields = fields_of(summarizer, request(span=SPAN[2:], old=old))
    assert fields["context_to_preserve"].splitlines()[:3] == [FACT.text, RULE.text, ARTIFACT.text]
    assert (
        fill(texts.context_offload_reminder, path="offload/context-0001.json")
        in fields["context_to_preserve"]
    )


@pytest.mark.parametrize("cap", [1, 20, 60, 200])
def test_fields_are_capped_keeping_whole_lines(cap: int) -> None:
    fields = fields_of(ExtractiveSummarizer(probes=PROBES, field_chars=cap))
    full = fields_of(ExtractiveSummarizer(probes=PROBES, field_chars=10_000))
    for name, value in fields.items():
        assert len(value) <= max(cap, len("(none)")), name
        if len(value) > cap // 2 and "\n" in value:
            lines = value.splitlines()
            assert all(line in full[name].splitlines() for line in lines), name
    state = fields["current_state"].splitlines()
    assert full["current_state"].endswith(state[-1])  # the newest calls are kept
    if cap == 60:
        assert fields["task_overview"] == f"- Fix the login bug.\n  {RULE.text}"
        assert fields["context_to_preserve"] == f"{FACT.text}\n{RULE.text}"
    if cap == 1:
        assert fields["task_overview"] == "-"  # a single line longer than the cap is cut


def fixed_outcome(summarizer: FixedSummarizer | ExtractiveSummarizer, req: ModelRequest) -> object:
    try:
        response = summarizer.respond(req)
    except ModelError as error:
        return type(error)
    try:
        read_summary_fields(response.blocks, SCHEMA)
    except StructuredOutputError:
        return response
    return "ok"


@pytest.mark.parametrize("mode", ["no_tool_call", "empty", "malformed", "missing_field", "raise", "overflow"])
def test_failure_modes_are_the_fixed_summarizers(mode: FailMode) -> None:
    fixed = FixedSummarizer(fields=dict.fromkeys(FIELDS, "x"), fail_on=frozenset({2}), fail_mode=mode)
    extractive = ExtractiveSummarizer(fail_on=frozenset({2}), fail_mode=mode)
    for invocation in (1, 2, 3):
        req = request(invocation=invocation)
        assert fixed_outcome(fixed, req) == fixed_outcome(extractive, req)
    assert fixed_outcome(extractive, request(invocation=2)) != "ok"


def test_overflowing_its_own_window() -> None:
    summarizer = ExtractiveSummarizer(window=50)
    with pytest.raises(ContextOverflowError):
        summarizer.respond(request(tokens=51))
    assert fixed_outcome(summarizer, request(tokens=50)) == "ok"
    assert len(summarizer.requests) == 2


def test_params_and_validation() -> None:
    summarizer = ExtractiveSummarizer(probes=PROBES, fact_recall=0.5, fail_on=frozenset({3, 1}))
    assert summarizer.params() == {
        "kind": "extractive",
        "seed": 0,
        "fact_recall": 0.5,
        "rule_recall": 1.0,
        "artifact_recall": 1.0,
        "field_chars": 800,
        "probes": ["db-port", "no-coauthor", "trace"],
        "fail_on": [1, 3],
        "fail_mode": "no_tool_call",
        "window": None,
    }
    with pytest.raises(ValueError, match=r"rule_recall is 1.5; a recall is a share in \[0, 1\]"):
        ExtractiveSummarizer(rule_recall=1.5)
    with pytest.raises(ValueError, match="field_chars"):
        ExtractiveSummarizer(field_chars=0)


@given(
    history=paired_histories(),
    cap=st.integers(1, 300),
    recall=st.sampled_from([0.0, 0.5, 1.0]),
    seed=st.integers(0, 3),
)
def test_any_history_gives_capped_deterministic_fields_without_forgotten_probes(
    history: list[Message], cap: int, recall: float, seed: int
) -> None:
    planted = (text_message("user", f"intro\n{FACT.text}\n{RULE.text}\n{ARTIFACT.text}", id="p0"), *history)
    summarizer = ExtractiveSummarizer(
        probes=PROBES,
        fact_recall=recall,
        rule_recall=recall,
        artifact_recall=recall,
        seed=seed,
        field_chars=cap,
    )
    fields = fields_of(summarizer, request(span=planted))
    assert fields == fields_of(summarizer, request(span=planted))
    assert set(fields) == set(FIELDS)
    for value in fields.values():
        assert len(value) <= cap or value == "(none)"
        for probe in PROBES:
            assert summarizer.remembered(probe) or not probe_found(probe, value)


def test_a_request_without_the_schema_tool_gets_the_fields_as_free_text() -> None:
    summarizer = ExtractiveSummarizer(probes=PROBES)
    structured = fields_of(summarizer)
    free = summarizer.respond(replace(request(), tools=(), tool_choice="auto"))
    assert free.calls == () and free.text == summary_text_of(structured)
    failing = ExtractiveSummarizer(fail_on=frozenset({1}), fail_mode="empty")
    assert failing.respond(replace(request(), tools=())).text == ""


def test_a_conversation_embedded_in_the_prompt_still_shows_its_probes() -> None:
    prompt = f"Summarise this conversation:\nuser: do it\ntool: {FACT.text}"
    messages = (text_message("system", "s"), text_message("user", prompt))
    fields = ExtractiveSummarizer(probes=PROBES).summarize(messages)
    assert fields["context_to_preserve"] == FACT.text
    assert fields["task_overview"] == "(none)"
