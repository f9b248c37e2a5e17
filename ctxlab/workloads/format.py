"""The `script:` section of a scenario file (README.md, Scenario files) and its conversion to a
core `Script`.

Invariants:
- Every model forbids unknown keys; an unknown key is reported at its own path with the allowed
  keys and a "did you mean". Sized content (`text`, `bytes`, `tokens`, `blocks`, `image`) is
  `ctxlab.workloads.content`'s.
- `ScriptSpec.to_script(seed)` is deterministic: each generated item draws from its own
  generator derived from the seed and the item's field path (e.g. `turns[0].user`), so editing
  one item never changes the text of another.
- A call input mapping becomes `json.dumps(mapping, ensure_ascii=False)`, keys in file order.
- A call without `result` runs the lab's built-in tool of that name, so it must name one; a call
  with `error: true` needs a result. `reset_tools` (with `tool_groups`) and `Skill` (with
  `skills`) are built in and carry no result; a call of a group's tool carries one, which the
  lab ignores while the group is inactive. When `tools` are declared, every call names a declared or a
  built-in tool. Call ids, where given, are unique. Every round has calls: a response without
  tool calls ends the reply, so a call-less round would cut it short.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import zoneinfo
from collections.abc import Iterator
from typing import Any

from pydantic import (
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from ctxlab.core.agentscope.toolkit import RESET_TOOLS
from ctxlab.core.messages.tools import ToolSchema
from ctxlab.core.world.script import DEFAULT_START, Script, ScriptedCall, ScriptedRound, ScriptedTurn
from ctxlab.core.world.toolkit import BASIC_GROUP, SKILL_VIEWER, Skill, ToolGroup
from ctxlab.problems import (
    Loc,
    Problem,
    WorkloadError,
    describe_errors,
    did_you_mean,
    located_error,
)
from ctxlab.workloads.content import ContentForm, Seconds, Spec, TextForm, render_parts, render_text
from ctxlab.workloads.probes import Probe, ProbeKind, parse_where

BUILTIN_TOOLS = (
    "TaskCreate",
    "TaskGet",
    "TaskList",
    "TaskUpdate",
    "CompressContext",
    "read_document",
    "fetch_artifact",
)
"""Tools the lab itself runs when a scripted call has no `result`."""


class ToolSpec(Spec):
    """A flat tool schema; sent and counted in the `{"type": "function", ...}` form."""

    name: str = Field(min_length=1)
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})

    def to_schema(self) -> ToolSchema:
        """The core tool schema."""
        return ToolSchema.of(self.name, self.description, self.parameters)


class ToolGroupSpec(Spec):
    """A tool group: its tools are offered only while the agent has it active (`reset_tools`)."""

    name: str = Field(min_length=1)
    description: str = Field(description="What the group is for; the activation tool shows it.")
    instructions: str | None = Field(
        default=None,
        description='Shown when the group is activated; `""` differs from absent as in AgentScope '
        "(an empty text still opens the instruction section).",
    )
    tools: list[ToolSpec] = Field(min_length=1)

    def to_group(self) -> ToolGroup:
        """The core tool group."""
        return ToolGroup(
            name=self.name,
            description=self.description,
            instructions=self.instructions,
            tools=tuple(tool.to_schema() for tool in self.tools),
        )


class SkillSpec(Spec):
    """A skill: listed in the system prompt, its markdown read through the `Skill` viewer."""

    name: str = Field(min_length=1)
    description: str
    markdown: TextForm
    dir: str | None = Field(default=None, description="The folder the listing names (default skills/<name>).")

    def to_skill(self, seed: int, path: str) -> Skill:
        """The core skill; generated markdown is drawn at `path.markdown`."""
        return Skill(
            name=self.name,
            description=self.description,
            markdown=render_text(self.markdown, seed, f"{path}.markdown"),
            dir=self.dir if self.dir is not None else f"skills/{self.name}",
        )


class CallSpec(Spec):
    """One tool call of a round and what it returns; no `result` runs the built-in tool."""

    tool: str = Field(min_length=1)
    input: dict[str, Any] = Field(default_factory=dict)
    result: ContentForm | None = None
    error: bool = False
    id: str | None = Field(default=None, min_length=1)
    delegate: ScriptSpec | None = Field(
        default=None,
        exclude_if=lambda value: value is None,  # absent from dumps, so config hashes stay as they were
        description="A sub-agent's script, run in a context of its own; its final answer is the result.",
    )

    @model_validator(mode="after")
    def _error_needs_result(self) -> CallSpec:
        if self.error and self.result is None:
            message = "error: true needs a result to mark as an error; add `result: {text: ...}`"
            raise located_error("CallSpec", [(("error",), message, True)])
        if self.delegate is not None and self.result is not None:
            message = "a delegated call's result is the sub-agent's final answer; drop `result`"
            raise located_error("CallSpec", [(("result",), message, None)])
        return self

    def to_call(self, seed: int, path: str) -> ScriptedCall:
        """The core call; the result is generated at `path.result`, a sub-agent's script under
        `path.delegate`."""
        result = None if self.result is None else render_parts(self.result, seed, f"{path}.result")
        arguments = json.dumps(self.input, ensure_ascii=False)
        delegate = None
        if self.delegate is not None:
            delegate = self.delegate.to_script(seed, prefix=f"{path}.delegate.")
        return ScriptedCall(
            tool=self.tool, input=arguments, result=result, error=self.error, id=self.id, delegate=delegate
        )


class RoundSpec(Spec):
    """One model response: optional text and thinking, then the calls of one batch."""

    text: TextForm | None = None
    thinking: TextForm | None = None
    advance_seconds: Seconds = 0.0
    calls: list[CallSpec] = Field(default_factory=list)

    def to_round(self, seed: int, path: str) -> ScriptedRound:
        """The core round."""
        return ScriptedRound(
            text=None if self.text is None else render_text(self.text, seed, f"{path}.text"),
            thinking=None if self.thinking is None else render_text(self.thinking, seed, f"{path}.thinking"),
            calls=tuple(c.to_call(seed, f"{path}.calls[{i}]") for i, c in enumerate(self.calls)),
            advance_seconds=self.advance_seconds,
        )


class TurnSpec(Spec):
    """A user message, the rounds of the reply, and the final answer."""

    user: ContentForm
    advance_seconds: Seconds = 0.0
    timezone: str | None = None
    rounds: list[RoundSpec] = Field(default_factory=list)
    final: TextForm = ""

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str | None) -> str | None:
        return None if value is None else check_timezone(value)

    def to_turn(self, seed: int, path: str) -> ScriptedTurn:
        """The core turn."""
        return ScriptedTurn(
            user=render_parts(self.user, seed, f"{path}.user"),
            rounds=tuple(r.to_round(seed, f"{path}.rounds[{i}]") for i, r in enumerate(self.rounds)),
            final=render_text(self.final, seed, f"{path}.final"),
            advance_seconds=self.advance_seconds,
            timezone=self.timezone,
        )


@functools.cache
def known_zones() -> frozenset[str]:
    """Every IANA zone name this machine knows (read once: it lists the zone files)."""
    return frozenset(zoneinfo.available_timezones())


def check_timezone(name: str) -> str:
    """`name` if it is a known IANA zone; else a ValueError with a suggestion.

    Only a name among `known_zones` is opened: any other string would be opened as a file under
    the zone folders, where a folder (`America`) or a name too long for a file fails with an
    OSError rather than as an unknown zone.
    """
    try:
        if name not in known_zones():
            raise zoneinfo.ZoneInfoNotFoundError(name)
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        hint = did_you_mean(name, known_zones())
        shown = name if len(name) <= 80 else name[:60] + "..."
        raise ValueError(
            f"unknown timezone {shown!r}{hint}; use an IANA name such as UTC or Asia/Shanghai"
        ) from None
    return name


class ScriptSpec(Spec):
    """The `script:` section: system prompt, tool schemas and turns."""

    system_prompt: TextForm = ""
    tools: list[ToolSpec] = Field(default_factory=list)
    # Left out of dumps when empty, so the config hashes of scripts without them stay as they were.
    tool_groups: list[ToolGroupSpec] = Field(default_factory=list, exclude_if=lambda value: not value)
    skills: list[SkillSpec] = Field(default_factory=list, exclude_if=lambda value: not value)
    turns: list[TurnSpec] = Field(min_length=1)

    @model_validator(mode="after")
    def _cross_checks(self) -> ScriptSpec:
        problems = [
            *_duplicate_tools(self),
            *_group_problems(self),
            *_empty_rounds(self),
            *_call_problems(self),
            *_toolkit_call_problems(self),
        ]
        if problems:
            raise located_error("ScriptSpec", problems)
        return self

    def calls(self) -> Iterator[tuple[Loc, CallSpec]]:
        """Every call with its path, in order."""
        for t, turn in enumerate(self.turns):
            for r, round_ in enumerate(turn.rounds):
                for c, call in enumerate(round_.calls):
                    yield ("turns", t, "rounds", r, "calls", c), call

    def to_script(
        self, seed: int, *, start: dt.datetime = DEFAULT_START, timezone: str = "UTC", prefix: str = ""
    ) -> Script:
        """The core `Script`; all filler and images derived from `seed` and each item's path
        (`prefix` is the path of a sub-agent's script inside its parent's)."""
        return Script(
            system_prompt=render_text(self.system_prompt, seed, f"{prefix}system_prompt"),
            tools=tuple(tool.to_schema() for tool in self.tools),
            turns=tuple(turn.to_turn(seed, f"{prefix}turns[{i}]") for i, turn in enumerate(self.turns)),
            start=start,
            timezone=timezone,
            tool_groups=tuple(group.to_group() for group in self.tool_groups),
            skills=tuple(skill.to_skill(seed, f"{prefix}skills[{i}]") for i, skill in enumerate(self.skills)),
        )

    def builtin_tools(self) -> tuple[str, ...]:
        """The tools the lab runs for a call without `result`: the fixed ones, `reset_tools` when
        there are groups, `Skill` when there are skills."""
        return (
            *BUILTIN_TOOLS,
            *((RESET_TOOLS,) if self.tool_groups else ()),
            *((SKILL_VIEWER,) if self.skills else ()),
        )


def _duplicate_tools(spec: ScriptSpec) -> Iterator[tuple[Loc, str, object]]:
    seen: set[str] = set()
    for i, tool in enumerate(spec.tools):
        if tool.name in seen:
            yield ("tools", i, "name"), f"tool {tool.name!r} is declared twice; keep one", tool.name
        seen.add(tool.name)


def _group_problems(spec: ScriptSpec) -> Iterator[tuple[Loc, str, object]]:
    names: set[str] = set()
    tools = {tool.name for tool in spec.tools}
    for g, group in enumerate(spec.tool_groups):
        if group.name == BASIC_GROUP:
            message = (
                "the basic group is the script's own `tools`, always active; give the group another name"
            )
            yield ("tool_groups", g, "name"), message, group.name
        elif group.name in names:
            yield (
                ("tool_groups", g, "name"),
                f"tool group {group.name!r} is declared twice; keep one",
                group.name,
            )
        names.add(group.name)
        for t, tool in enumerate(group.tools):
            if tool.name in tools:
                message = (
                    f"tool {tool.name!r} is declared already (in `tools` or a group); a tool has one place"
                )
                yield ("tool_groups", g, "tools", t, "name"), message, tool.name
            tools.add(tool.name)
    skills: set[str] = set()
    for k, skill in enumerate(spec.skills):
        if skill.name in skills:
            yield ("skills", k, "name"), f"skill {skill.name!r} is declared twice; keep one", skill.name
        skills.add(skill.name)


def _toolkit_call_problems(spec: ScriptSpec) -> Iterator[tuple[Loc, str, object]]:
    """Activation and viewer calls are answered by the lab's toolkit, with inputs it can read."""
    toolkit = {RESET_TOOLS} if spec.tool_groups else set()
    toolkit |= {SKILL_VIEWER} if spec.skills else set()
    for loc, call in spec.calls():
        if call.tool not in toolkit:
            continue
        if call.result is not None:
            message = f"the lab's toolkit answers {call.tool!r} calls itself; drop `result`"
            yield (*loc, "result"), message, None
        if call.tool == RESET_TOOLS:
            for key, value in call.input.items():
                if not isinstance(value, bool):
                    message = f"reset_tools takes true or false per group, not {value!r}; write {key}: true"
                    yield (*loc, "input", key), message, value
        elif not isinstance(call.input.get("skill"), str):
            message = "the Skill viewer needs the skill's name: input: {skill: <name>}"
            yield (*loc, "input"), message, call.input


def _empty_rounds(spec: ScriptSpec) -> Iterator[tuple[Loc, str, object]]:
    for t, turn in enumerate(spec.turns):
        for r, round_ in enumerate(turn.rounds):
            if not round_.calls:
                message = (
                    "a round without calls ends the reply (a response with no tool calls is the final "
                    "answer), so the rounds after it and `final` would never be sent; add calls, or move "
                    "its text into `final`"
                )
                yield ("turns", t, "rounds", r, "calls"), message, []


def _call_problems(spec: ScriptSpec) -> Iterator[tuple[Loc, str, object]]:
    declared = [tool.name for tool in spec.tools] + [t.name for g in spec.tool_groups for t in g.tools]
    builtins = spec.builtin_tools()
    known = [*declared, *builtins]
    ids: set[str] = set()
    for loc, call in spec.calls():
        if call.result is None and call.delegate is None and call.tool not in builtins:
            message = (
                f"call to {call.tool!r} has no result, and only built-in tools "
                f"({', '.join(builtins)}) run without one; add `result: {{text: ...}}` or `{{bytes: N}}`"
            )
            yield (*loc, "result"), message, None
        elif declared and call.tool not in known:
            message = (
                f"tool {call.tool!r} is neither declared under `tools` nor built-in"
                f"{did_you_mean(call.tool, known)}; declare it or fix the name"
            )
            yield (*loc, "tool"), message, call.tool
        if call.id is not None and call.id in ids:
            yield (*loc, "id"), f"call id {call.id!r} is used twice; ids must be unique in a script", call.id
        if call.id is not None:
            ids.add(call.id)


CallSpec.model_rebuild()


def parse_script(data: object, *, source: str | None = None) -> ScriptSpec:
    """Validate a `script:` mapping; errors name every bad field and how to fix it.

    Raises:
        WorkloadError: one `Problem` per bad field.
    """
    try:
        return ScriptSpec.model_validate(data)
    except ValidationError as error:
        raise WorkloadError(describe_errors(error), source=source) from None


def script_problems(data: object) -> tuple[Problem, ...]:
    """The problems of a `script:` mapping; empty when it is valid."""
    try:
        ScriptSpec.model_validate(data)
    except ValidationError as error:
        return describe_errors(error)
    return ()


class ProbeSpec(Spec):
    """A retention probe: `{key: db-port, value: "5432", where: "turn 0 round 0"}`."""

    kind: ProbeKind = "fact"
    key: str = Field(min_length=1)
    value: str = Field(description="The fact's value, the rule's words or the artifact; not blank.")
    where: str

    @field_validator("value")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError(
                f"{value!r} is blank: a blank value is found in every text or in none, so its retention "
                "measures nothing; give the fact, rule or artifact its text"
            )
        return value

    @field_validator("where")
    @classmethod
    def _readable(cls, value: str) -> str:
        parse_where(value)
        return value

    def probe(self) -> Probe:
        """The core probe."""
        return Probe(kind=self.kind, key=self.key, value=self.value, where=self.where)
