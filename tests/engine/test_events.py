"""Typed events: every event the code records is an `EventKind` member, every member is recorded
somewhere and documented, and the recorder takes nothing else."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from ctxlab.core import events as events_module
from ctxlab.core.events import DETAILED, Event, EventKind, joined
from ctxlab.engine.trace import Recorder

PACKAGE = Path(__file__).resolve().parents[2] / "ctxlab"
CLASS_EVENTS = {"self.event", "step.event"}
"""Call-site arguments that are a step's `event: ClassVar[EventKind]`."""


def _name(node: ast.expr) -> str:
    return ast.unparse(node)


def recorded() -> list[tuple[str, str]]:
    """(module, argument) of every `….event(…)` call and every step's `event = …` in the package."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "event"
            ):
                found.append((module, _name(node.args[0])))
            elif isinstance(node, ast.AnnAssign) and _name(node.target) == "event" and node.value is not None:
                found.append((module, _name(node.value)))
    return found


def test_every_recorded_event_is_a_member_and_every_member_is_recorded() -> None:
    sites = recorded()
    assert len(sites) > 20  # the walk really finds the call sites
    members = {f"EventKind.{kind.name}" for kind in EventKind}
    strays = [(module, argument) for module, argument in sites if argument not in members | CLASS_EVENTS]
    assert strays == []
    used = {argument for _, argument in sites}
    assert members - used == set()  # no member is left that nothing records


def test_every_member_is_documented() -> None:
    tree = ast.parse(Path(events_module.__file__).read_text(encoding="utf-8"))
    (enum,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "EventKind"]
    documented = {
        _name(member.targets[0])
        for member, after in zip(enum.body, enum.body[1:], strict=False)
        if isinstance(member, ast.Assign)
        and isinstance(after, ast.Expr)
        and isinstance(after.value, ast.Constant)
        and isinstance(after.value.value, str)
        and after.value.value.strip()
    }
    assert documented == {kind.name for kind in EventKind}


def test_a_detail_only_where_the_kind_takes_one() -> None:
    assert str(Event(EventKind.INJECTED, "tool-error")) == "injected:tool-error"
    for kind in EventKind:
        with pytest.raises(ValueError, match="detail"):
            Event(kind, "" if kind in DETAILED else "x")
    with pytest.raises(ValueError, match=";"):
        Event(EventKind.INJECTED, "a;b")


def test_the_recorder_takes_only_typed_events() -> None:
    recorder = Recorder()
    recorder.event(EventKind.COMPRESSED)
    recorder.event(EventKind.INJECTED, "tasks")
    with pytest.raises(TypeError, match="EventKind"):
        recorder.event("compressed")  # type: ignore[arg-type]
    taken = recorder.take_events()
    assert taken == (Event(EventKind.COMPRESSED), Event(EventKind.INJECTED, "tasks"))
    assert joined(taken) == "compressed;injected:tasks" and recorder.take_events() == ()
