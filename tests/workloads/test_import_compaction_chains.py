"""Which request of a request log is the conversation after a compaction (`importers.chains`):
the request that goes on from the summary carries the summarisation request's answer, so it
continues that conversation even when no request follows it; a side request, and a request
holding only a short common answer, link to nothing. Also the note an OpenAI Responses
`compaction` item gets, its summary being encrypted."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from ctxlab.workloads.files import JSON_DEPTH
from ctxlab.workloads.importers import import_lines
from ctxlab.workloads.importers.chains import CARRIED, KEPT, PASSAGES, Chains, passages
from tests.workloads.importing import lines

SYSTEM = "You are a coding agent."
ASK_SUMMARY = "Your task is to create a detailed summary of the conversation so far."
SUMMARY = "The user asked for tasks 1 and 2; both are done, and their tests pass on the main branch."
ANALYSIS = "<analysis>The user asked for two tasks; both were finished without errors.</analysis>"
GOES_ON = "This session is being continued from a previous conversation. Summary: "
OUTSIDE = "skipped 1 × request outside the conversation (a side request or sub-agent) (not replayed)"


def say(*texts: str) -> list[dict[str, Any]]:
    """Messages alternating user and assistant, starting with the user."""
    return [{"role": ("user", "assistant")[i % 2], "content": t} for i, t in enumerate(texts)]


def answered(messages: list[dict[str, Any]], text: str) -> dict[str, Any]:
    """A Messages request with its logged response, which says `text`."""
    request = {"model": "m", "max_tokens": 100, "system": SYSTEM, "messages": messages}
    response = {"type": "message", "role": "assistant", "content": [{"type": "text", "text": text}]}
    return {"request": request, "response": response}


def compacted(*after: list[dict[str, Any]], summary: str = SUMMARY) -> list[dict[str, Any]]:
    """Two requests of an agent, its client's summarisation request (the whole conversation and
    a last user message asking for a summary, answered by the summary between tags), then the
    requests `after` the compaction."""
    talk = say("task 1", "did 1", "task 2")
    return [
        answered(talk[:1], "did 1"),
        answered(talk, "did 2"),
        answered([*talk, *_tail(ASK_SUMMARY)], f"{ANALYSIS}<summary>{summary}</summary>"),
        *(answered(messages, f"did {3 + i}") for i, messages in enumerate(after)),
    ]


def _tail(ask: str) -> list[dict[str, Any]]:
    """The agent's second answer, then the user message `ask`."""
    return [{"role": "assistant", "content": "did 2"}, {"role": "user", "content": ask}]


def resumed(*texts: str, summary: str = SUMMARY) -> list[dict[str, Any]]:
    """The client's first request after the compaction: the summary, then `texts`."""
    return say(GOES_ON + summary, "ok", *texts)


def imported_log(entries: list[dict[str, Any]]) -> tuple[list[Any], tuple[str, ...]]:
    imported = import_lines(lines(*entries), "log.jsonl")
    return [m["content"] for m in imported.messages], imported.warnings


def test_a_compaction_followed_by_one_request_gives_that_request() -> None:
    """The repro: the request after the compaction was a chain of one, taken for a side request,
    and the summarisation request was replayed as the conversation, `task 3` lost."""
    said, warnings = imported_log(compacted(resumed("task 3")))
    assert said == [SYSTEM, GOES_ON + SUMMARY, "ok", "task 3", "did 3"]
    assert ASK_SUMMARY not in said
    assert "skipped 3 × earlier request (not replayed)" in warnings
    assert not any("outside the conversation" in w for w in warnings)
    (note,) = [w for w in warnings if "after a compaction" in w]
    assert "request at line 4 holds the answer to the request at line 3" in note
    assert "the conversation taken is the request at line 4" in note and "the 3 requests" in note


def test_a_compaction_followed_by_two_requests_gives_the_last() -> None:
    first = resumed("task 3")
    said, warnings = imported_log(compacted(first, [*first, *_more()]))
    assert said == [SYSTEM, GOES_ON + SUMMARY, "ok", "task 3", "did 3", "task 4", "did 4"]
    assert "skipped 4 × earlier request (not replayed)" in warnings
    (note,) = [w for w in warnings if "after a compaction" in w]
    assert "line 4 holds the answer to the request at line 3" in note and "request at line 5" in note


def _more() -> list[dict[str, Any]]:
    """The answer to the first request after the compaction, then the next task."""
    return [{"role": "assistant", "content": "did 3"}, {"role": "user", "content": "task 4"}]


def test_a_side_request_after_a_compaction_stays_a_side_request() -> None:
    title = say("Write a title for a conversation that begins: task 1")
    said, warnings = imported_log(compacted(title))
    assert said[-2:] == [ASK_SUMMARY, f"{ANALYSIS}<summary>{SUMMARY}</summary>"]
    assert OUTSIDE in warnings and not any("after a compaction" in w for w in warnings)
    said, warnings = imported_log(compacted(title, resumed("task 3")))
    assert said[-2:] == ["task 3", "did 4"]
    assert OUTSIDE in warnings and "skipped 3 × earlier request (not replayed)" in warnings


def test_a_short_common_answer_links_no_request() -> None:
    """A main request answered "ok", then a request of one message holding "ok": no link, so
    it is a side request and the main chain is the conversation."""
    chains: Chains[int] = Chains()
    chains.add(1, say("fix it"), 1, answer=["ok"])
    chains.add(2, say("fix it", "ok", "and the tests"), 2, answer=["Done, it is ok."])
    chains.add(3, say("Say ok if this is ok: Done, it is ok."), 3, answer=["ok"])
    choice = chains.choice()
    assert choice is not None and (choice.line, choice.others, choice.resumed) == (2, 1, None)


def test_only_a_chain_of_two_or_more_is_resumed() -> None:
    """A side request's answer (a title) quoted by a later request links nothing: a chain of one
    is no conversation to go on with."""
    chains: Chains[int] = Chains()
    chains.add(1, say("name this session"), 1, answer=["Fixing the flaky parser test"])
    chains.add(2, say("Session: Fixing the flaky parser test. Fix it."), 2, answer=["on it"])
    assert [link.parent for link in chains.links] == [None, None]


def test_the_summary_between_tags_links_without_the_analysis_a_client_drops() -> None:
    chains: Chains[int] = Chains()
    chains.add(1, say("a"), 1)
    chains.add(2, say("a", "b", ASK_SUMMARY), 2, answer=[f"{ANALYSIS}\n\n<summary>\n  a then  b\n</summary>"])
    chains.add(3, say("Summary:\na then b\n\nGo on."), 3)
    assert chains.links[-1].parent is None  # "a then b" is too short to be a sign
    long_summary = "The user asked for a, then for b;\n\nboth are done, tested and merged to main."
    chains.add(4, say("a", "b", ASK_SUMMARY), 4, answer=[f"{ANALYSIS}<summary>{long_summary}</summary>"])
    chains.add(5, [{"role": "user", "content": [{"type": "text", "text": f"Summary: {long_summary}"}]}], 5)
    assert chains.links[-1].parent == 3 and chains.links[-1].carried
    choice = chains.choice()
    assert choice is not None and choice.resumed == (5, 4, 2)


def test_a_claude_trace_log_goes_on_after_a_compaction() -> None:
    """claude-trace logs Claude Code's calls with their responses, read as a Messages log's."""

    def traced(entry: dict[str, Any]) -> dict[str, Any]:
        request = {"method": "POST", "url": "https://api.anthropic.com/v1/messages?beta=true", "headers": {}}
        response = {"status_code": 200, "headers": {}, "body": entry["response"]}
        return {"request": {**request, "body": entry["request"]}, "response": response, "logged_at": "t"}

    imported = import_lines(lines(*map(traced, compacted(resumed("task 3")))), "log-1.jsonl")
    assert [m["content"] for m in imported.messages][-2:] == ["task 3", "did 3"]
    assert "skipped 3 × earlier request (not replayed)" in imported.warnings


def test_a_chat_completions_log_goes_on_after_a_compaction() -> None:
    def completion(text: str) -> dict[str, Any]:
        message = {"role": "assistant", "content": text}
        return {"id": "c", "object": "chat.completion", "choices": [{"index": 0, "message": message}]}

    talk = [{"role": "system", "content": SYSTEM}, *say("task 1", "did 1", "task 2")]
    entries = [
        {"model": "gpt-4o", "messages": talk[:2]},
        completion("did 1"),
        {"model": "gpt-4o", "messages": talk},
        completion("did 2"),
        {"model": "gpt-4o", "messages": [*talk, *_tail(ASK_SUMMARY)]},
        completion(f"<summary>{SUMMARY} and checked</summary>"),
        {"model": "gpt-4o", "messages": [talk[0], *resumed("task 3", summary=f"{SUMMARY} and checked")]},
        completion("did 3"),
    ]
    imported = import_lines(lines(*entries), "log.jsonl")
    assert imported.format == "openai-chat"
    assert [m["content"] for m in imported.messages][-2:] == ["task 3", "did 3"]
    assert any("after a compaction" in w for w in imported.warnings)


def _responses_entry(given: list[dict[str, Any]], rid: str, text: str) -> dict[str, Any]:
    part = {"type": "output_text", "text": text}
    output = [{"type": "message", "role": "assistant", "content": [part]}]
    return {
        "request": {"model": "m", "input": given},
        "response": {"id": rid, "object": "response", "output": output},
    }


def test_a_responses_log_goes_on_after_a_compaction() -> None:
    talk = say("task 1", "did 1", "task 2")
    entries = [
        _responses_entry(talk[:1], "r1", "did 1"),
        _responses_entry(talk, "r2", "did 2"),
        _responses_entry([*talk, *_tail(ASK_SUMMARY)], "r3", f"<summary>{SUMMARY}</summary>"),
        _responses_entry(resumed("task 3"), "r4", "did 3"),
    ]
    imported = import_lines(lines(*entries), "log.jsonl")
    assert imported.format == "openai-responses"
    assert [m["content"] for m in imported.messages][-2:] == ["task 3", "did 3"]
    assert "skipped 3 × earlier request (not replayed)" in imported.warnings


def test_a_responses_compaction_item_is_noted_as_replaying_more_than_the_model_saw() -> None:
    compaction = {"type": "compaction", "id": "cmp_1", "encrypted_content": "gAAAAB" + "x" * 40}
    given = [*say("task 1", "did 1"), compaction, {"role": "user", "content": "task 2"}]
    imported = import_lines(lines(_responses_entry(given, "r1", "did 2")), "log.jsonl")
    assert [m["content"] for m in imported.messages] == ["task 1", "did 1", "task 2", "did 2"]
    assert "skipped 1 × item 'compaction' (not replayed)" in imported.warnings
    assert any("`compaction` item" in w and "longer than what the model saw" in w for w in imported.warnings)


def test_a_responses_request_sending_back_only_the_compaction_item_goes_on_from_it() -> None:
    """A client that drops the items before a compaction item sends it back as it was: its
    encrypted summary is the answer the request carries."""
    blob = "gAAAAB" + "q" * 60
    compaction = {"type": "compaction", "id": "cmp_1", "encrypted_content": blob}
    talk = say("task 1", "did 1", "task 2")
    first = _responses_entry(talk[:1], "r1", "did 1")
    second = _responses_entry(talk, "r2", "did 2")
    second["response"]["output"].append(compaction)
    third = _responses_entry([compaction, {"role": "user", "content": "task 3"}], "r3", "did 3")
    imported = import_lines(lines(first, second, third), "log.jsonl")
    assert [m["content"] for m in imported.messages] == ["task 3", "did 3"]
    assert any("after a compaction" in w for w in imported.warnings)


def test_a_request_nested_as_deep_as_a_transcript_may_is_read() -> None:
    chains: Chains[int] = Chains()
    chains.add(1, say("a"), 1)
    chains.add(2, say("a", "b", "c"), 2, answer=[GOES_ON])
    nested: Any = GOES_ON
    for _ in range(JSON_DEPTH - 2):
        nested = [nested]
    chains.add(3, [{"role": "user", "content": nested}], 3)
    assert chains.links[-1].parent == 1


# ---------------------------------------------------------------------------------------------
# Properties

text = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=400)


@given(st.lists(text, max_size=4))
def test_passages_are_bounded_pieces_of_the_answer(texts: list[str]) -> None:
    found = passages(texts)
    assert len(found) <= PASSAGES
    flat = "\0".join(" ".join(t.split()) for t in texts)
    for passage in found:
        assert CARRIED <= len(passage) <= KEPT
        assert passage in flat


@given(st.text(max_size=CARRIED - 1), text)
def test_an_answer_shorter_than_a_passage_never_links(short: str, said: str) -> None:
    chains: Chains[int] = Chains()
    chains.add(1, say("a"), 1)
    chains.add(2, say("a", "b", "c"), 2, answer=[short])
    chains.add(3, say(f"{said}{short}{said}"), 3)
    assert chains.links[-1].parent is None


@given(
    st.text(st.characters(codec="ascii", categories=["L", "N"]), min_size=CARRIED, max_size=600), text, text
)
def test_a_request_carrying_a_long_answer_continues_its_chain(summary: str, before: str, after: str) -> None:
    chains: Chains[int] = Chains()
    chains.add(1, say("a"), 1)
    chains.add(2, say("a", "b", "c"), 2, answer=[f"<summary>{summary}</summary>"])
    chains.add(3, say(f"{before} {summary} {after}", "ok", "go on"), 3)
    choice = chains.choice()
    assert choice is not None and (choice.line, choice.earlier, choice.resumed) == (3, 2, (3, 2, 2))
    assert set(chains.said) <= set(chains.tips)


LONG_ENOUGH = "an answer long enough to be kept as a passage of its own"


def test_an_answer_kept_is_dropped_once_its_request_is_continued() -> None:
    chains: Chains[int] = Chains()
    for n in range(1, 30):
        chains.add(n, say(*["step"] * (2 * n - 1)), n, answer=[f"{LONG_ENOUGH}, number {n}"])
    assert list(chains.said) == [28] and list(chains.tips) == [28]
    assert chains.said[28] == (f"{LONG_ENOUGH}, number 29",)
