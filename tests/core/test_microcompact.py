"""Microcompact (nonoka): only superseded duplicate results change, in place, idempotently."""

from __future__ import annotations

from hypothesis import given

from ctxlab.core.compaction.microcompact import (
    MicrocompactParams,
    microcompact,
    parse_arguments,
    superseding_key,
)
from ctxlab.core.messages.blocks import TextBlock, ToolCallBlock, ToolResultBlock
from ctxlab.core.messages.message import Message
from ctxlab.core.messages.units import view_units
from ctxlab.core.wire.protocol import violations
from ctxlab.core.wire.views import to_openai
from tests.zoo_strategies import IMAGE, agent_histories, call, reply, result, user

P = MicrocompactParams()


def texts(msgs: tuple[Message, ...]) -> list[str]:
    return [b.text for m in msgs for b in m.blocks if isinstance(b, ToolResultBlock)]


def test_an_older_read_of_the_same_file_is_superseded() -> None:
    msgs = [
        user("look"),
        reply(call("a", "Read", file_path="x.py"), result("a", "v1", "Read", IMAGE)),
        reply(call("b", "Read", file_path="x.py"), result("b", "v2")),
    ]
    out = microcompact(msgs)
    assert out.superseded == ("a",)
    assert texts(out.messages) == ["[superseded by a newer read result]", "v2"]
    old = out.messages[1].blocks[1]
    assert isinstance(old, ToolResultBlock) and old.output == (
        TextBlock(text="[superseded by a newer read result]"),
    )
    assert (
        out.messages[0] is msgs[0] and out.messages[2] is msgs[2]
    )  # untouched messages are kept as they are


def test_keys_follow_nonoka() -> None:
    assert superseding_key("Read", {"file_path": "a", "path": "b"}, P) == ("read", "a")
    assert superseding_key("view", {"path": "b"}, P) == ("view", "b")
    assert superseding_key("read", {"path": ""}, P) is None
    assert superseding_key("Glob", {"pattern": "*.py"}, P) == ("glob", "*.py", "")
    assert superseding_key("grep", {"path": "src"}, P) is None
    long = "echo " + "x" * 300
    assert superseding_key("BASH", {"command": long}, P) == ("bash", long[:200])
    assert superseding_key("retrieve", {"path": "a"}, P) is None
    assert superseding_key("Read", {"file_path": 7}, P) == ("read", "7")


def test_different_keys_are_kept() -> None:
    msgs = [
        reply(
            call("a", "Read", file_path="x.py"),
            call("b", "read_file", file_path="x.py"),  # another tool name: another key
            call("c", "grep", pattern="TODO", path="src"),
            call("d", "grep", pattern="TODO", path="tests"),
            result("a", "1"),
            result("b", "2"),
            result("c", "3"),
            result("d", "4"),
        )
    ]
    assert microcompact(msgs).superseded == ()


def test_shell_commands_match_on_their_first_200_characters() -> None:
    same = "pytest " + "-k x " * 50
    msgs = [
        reply(call("a", "bash", command=same + "A"), result("a", "1", "bash")),
        reply(call("b", "bash", command=same + "B"), result("b", "2", "bash")),
    ]
    assert microcompact(msgs).superseded == ("a",)
    assert texts(microcompact(msgs).messages)[0] == "[superseded by a newer bash result]"


def test_results_without_a_reliable_call_are_left_alone() -> None:
    broken = ToolCallBlock(id="a", name="Read", input='{"file_path": "x.py"')  # not JSON
    msgs = [
        reply(broken, result("a", "1")),
        reply(call("b", "Read", file_path="x.py"), result("b", "2")),
        reply(result("zz", "orphan"), call("c", "Read", file_path="x.py"), result("c", "3")),
    ]
    out = microcompact(msgs)
    assert out.superseded == ("b",)
    assert texts(out.messages) == ["1", "[superseded by a newer read result]", "orphan", "3"]


def test_the_placeholder_is_a_parameter() -> None:
    msgs = [
        reply(call("a", "ls", path="."), result("a", "1")),
        reply(call("b", "ls", path="."), result("b", "2")),
    ]
    params = MicrocompactParams(read_tools=("ls",), placeholder="<old {tool} output>")
    assert texts(microcompact(msgs, params).messages) == ["<old ls output>", "2"]


def test_a_second_pass_changes_nothing() -> None:
    msgs = [
        reply(call("a", "Read", path="x"), result("a", "1")),
        reply(call("b", "Read", path="x"), result("b", "2")),
    ]
    once = microcompact(msgs)
    twice = microcompact(once.messages)
    assert twice.superseded == ()
    assert all(a is b for a, b in zip(twice.messages, once.messages, strict=True))


@given(agent_histories())
def test_microcompact_is_idempotent_and_keeps_every_pair_in_place(msgs: list[Message]) -> None:
    once = microcompact(msgs)
    assert microcompact(once.messages).messages == once.messages
    before = [(u.kind, u.call_ids) for u in view_units(msgs) if u.kind != "media"]
    after = [(u.kind, u.call_ids) for u in view_units(once.messages) if u.kind != "media"]
    assert after == before  # superseded results lose their images, nothing else moves
    assert violations(to_openai(once.messages), ["openai", "anthropic"]) == []
    assert len(once.messages) == len(msgs)
    for old, new in zip(msgs, once.messages, strict=True):
        assert len(old.blocks) == len(new.blocks)
        for a, b in zip(old.blocks, new.blocks, strict=True):
            changed = isinstance(a, ToolResultBlock) and a.id in once.superseded
            assert a == b or changed


@given(agent_histories())
def test_the_newest_result_of_every_key_is_untouched(msgs: list[Message]) -> None:
    out = microcompact(msgs)
    calls = {b.id: b for m in msgs for b in m.blocks if isinstance(b, ToolCallBlock)}
    newest: dict[object, str] = {}
    for b in (b for m in msgs for b in m.blocks if isinstance(b, ToolResultBlock)):
        key = superseding_key(calls[b.id].name, parse_arguments(calls[b.id].input), P)
        if key is not None:
            newest[key] = b.id
    assert not set(newest.values()) & set(out.superseded)
    assert len(out.superseded) == len({b for b in calls if b not in newest.values()} & _keyed(calls))


def _keyed(calls: dict[str, ToolCallBlock]) -> set[str]:
    return {i for i, c in calls.items() if superseding_key(c.name, parse_arguments(c.input), P) is not None}
