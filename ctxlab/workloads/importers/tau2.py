"""tau2-bench results, as OpenAI chat messages.

A results file is one JSON object, `{info, tasks, simulations}`: `info` describes the run (its
`environment_info` holds the domain's `policy`, and its agent's tool signatures as `tool_defs`
where the run kept them), and each simulation, `{id, task_id, trial, messages, reward_info,
termination_reason, ...}`, holds the messages of one conversation in tau2's own schema: `role`
(`system`, `user`, `assistant`, `tool`), `content`, calls as `{id, name, arguments (an object),
requestor}`, a tool's result as `{id (its call's), content, error, requestor}`, and bookkeeping
(`turn_idx`, `timestamp`, `cost`, `usage`, `raw_data`: the model's own response).

Mapping rules:
- The system prompt is not stored: tau2's agent builds it from instructions of its own and the
  domain policy. Where `info` holds the policy, the policy is the system prompt, and a note says
  the agent's instructions around it are missing; where it does not (a lone simulation's file),
  there is no system prompt, and a note says so.
- The user simulator's messages are user messages. An assistant message's calls are its calls;
  a call's arguments are the text the model wrote (its call in `raw_data.message.tool_calls`,
  when that text reads as the same arguments), else the arguments' JSON text. A tool message
  answering the agent is the result of the call its `id` names (an error result when `error`).
- In some domains (telecom) the user simulator has tools of its own: the calls of a user
  message, and the results of `requestor: user`, go between the user simulator and its
  environment and never reach the agent's requests, so they are skipped and counted; a user
  message holding only such calls is no message of the conversation. An assistant message's
  calls are the agent's.
- The user simulator's last message, when it ends the run (`###STOP###`, `###TRANSFER###` or
  `###OUT-OF-SCOPE###`), is skipped and counted: the agent never received it. tau2's agent
  speaks first; its greeting, before any user message, is replayed as the opening of the first
  reply (as every assistant message before the first user message is, `ctxlab.workloads.trace`).
- `turn_idx`, timestamps, costs, usage and `raw_data` (but for the arguments' text) are ignored.
  The tools declared are the agent's `tool_defs` in `info`, where the run kept them: each
  signature's `params` its parameters (the schema tau2 sends), its `doc` its description (the
  tool's Python signature and docstring, from which tau2 takes the description it sends, so a
  little longer); else the replay reads them off the calls.
- `ctxlab import` writes one conversation: the file's simulation `--session N` (0, the first,
  unless given; counted in file order) is read; the others are counted and a note names the one
  taken (`task_id`, `trial`). A file of one simulation (as a
  results folder keeps each in `simulations/`) is read alone, with no policy and no tools.

Invariants:
- Every error is at the line of the entry holding the simulation, naming the message by its
  index in `messages`; results that hold no simulation are an error, saying where they may be.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from ctxlab.workloads.importers.base import (
    Calls,
    Entry,
    Report,
    Wire,
    assistant,
    call,
    chosen_run,
    field_of,
    schema,
    system,
    tool,
    user,
)
from ctxlab.workloads.importers.tau_bench import taken_note, text_of_content, without_closing_stop

KIND = "further simulation (a conversation of its own)"
EXPECTED = (
    "not tau2 results: expected an object with a non-empty 'simulations' list (a run that keeps "
    "each simulation in a simulations/ folder beside its results: import one of those files), "
    "or one simulation"
)
POLICY = (
    "the system prompt is the domain policy the results store (info.environment_info.policy); "
    "tau2's agent sends it inside instructions of its own, which the results do not store"
)
NO_POLICY = (
    "the file stores no system prompt (nor the domain policy tau2's agent builds it from): none is replayed"
)
UNSENT = "user simulator's {} (requestor 'user': never sent to the agent)"


def is_results(value: object) -> bool:
    """A tau2 results object: a `simulations` list beside its `info` or `tasks`."""
    return (
        isinstance(value, Mapping)
        and isinstance(value.get("simulations"), list)
        and ("info" in value or "tasks" in value)
    )


def is_simulation(value: object) -> bool:
    """One tau2 simulation: its `messages` list, `task_id` and `termination_reason`."""
    return (
        isinstance(value, Mapping)
        and isinstance(value.get("messages"), list)
        and "task_id" in value
        and "termination_reason" in value
    )


def _simulations(value: object) -> list[Any] | None:
    """The simulations of an entry (None for none: not tau2's, or results holding none)."""
    if is_results(value):
        listed = value["simulations"]  # type: ignore[index]
        return list(listed) if listed else None
    return [value] if is_simulation(value) else None


def read_tau2(entries: Iterator[Entry], report: Report) -> Iterator[Wire]:
    """The messages of a results file's chosen simulation (see the module docstring)."""
    taken = None
    chosen = chosen_run(entries, report, _simulations, expected=EXPECTED, kind=KIND, runs="simulations")
    for number, value, simulation in chosen:
        if not is_simulation(simulation):
            raise report.error(
                number, f"simulations[{report.session}] is not a simulation: expected its 'messages' list"
            )
        taken = f"task_id {simulation.get('task_id')!r}, trial {simulation.get('trial')!r}"
        environment = field_of(value, "info", "environment_info") if is_results(value) else None
        _declare(field_of(environment, "tool_defs"), number, report)
        policy = field_of(environment, "policy")
        if isinstance(policy, str) and policy:
            report.notes.append(POLICY)
            yield system(policy)
        else:
            report.notes.append(NO_POLICY)
        yield from without_closing_stop(_messages(simulation["messages"], number, report), report)
    total = 1 + report.skipped[KIND]
    if taken is not None and total > 1:
        report.notes.append(taken_note("simulations", taken, total, report.session))


def _declare(tool_defs: object, number: int, report: Report) -> None:
    """The agent's tools, from the signatures `info` keeps (`{name: {name, doc, params}}`)."""
    if tool_defs is None:
        return
    if not isinstance(tool_defs, Mapping):
        raise report.error(number, "info.environment_info.tool_defs is not an object of tool signatures")
    for name, signature in tool_defs.items():
        declared = schema(name, field_of(signature, "doc"), field_of(signature, "params"))
        if declared is not None:
            report.tools.append(declared)


def _messages(messages: list[Any], number: int, report: Report) -> Iterator[Wire]:
    """A simulation's messages in order (the module docstring's rules)."""
    calls = Calls(report)
    for index, message in report.each(messages):
        where = f"messages[{index}]"
        if not isinstance(message, Mapping):
            raise report.error(number, f"{where} is not a message object")
        role = message.get("role")
        text = text_of_content(message.get("content"), where, number, report)
        if role == "tool":
            yield from _result(message, text, where, number, calls)
        elif role == "assistant":
            yield assistant(
                text, [_call(item, message, calls) for item in _calls(message, where, number, report)]
            )
        elif role == "user":
            for _ in _calls(message, where, number, report):
                report.skip(UNSENT.format("tool call"))
            if text or not message.get("tool_calls"):  # not a message of the user's calls alone
                yield user(text)
        elif role == "system":
            yield system(text)
        else:
            raise report.error(number, f"{where}: unknown role {role!r}")


def _result(message: Mapping[str, Any], text: str, where: str, number: int, calls: Calls) -> Iterator[Wire]:
    """The result of an agent's call; a result for the user simulator is counted."""
    if message.get("requestor", "assistant") == "user":
        calls.report.skip(UNSENT.format("tool result"))
        return
    yield tool(
        calls.answer(message.get("id"), number, key=f"{where}.id"), text, error=message.get("error") is True
    )


def _calls(message: Mapping[str, Any], where: str, number: int, report: Report) -> list[Mapping[str, Any]]:
    """A message's calls (tau2's `ToolCall`s), made by the message's sender.

    Raises:
        TraceError: `tool_calls` is not a list of calls with a string `id` and `name`.
    """
    listed = message.get("tool_calls") or []
    if not isinstance(listed, list) or not all(_is_call(item) for item in listed):
        raise report.error(number, f"{where}.tool_calls is not a list of calls with a string 'id' and 'name'")
    return listed


def _is_call(item: object) -> bool:
    return isinstance(item, Mapping) and isinstance(item.get("id"), str) and isinstance(item.get("name"), str)


def _call(item: Mapping[str, Any], message: Mapping[str, Any], calls: Calls) -> Wire:
    """An agent's call, its arguments the text the model wrote where `raw_data` has it."""
    return call(calls.declare(item["id"]), item["name"], _arguments(item, message))


def _arguments(item: Mapping[str, Any], message: Mapping[str, Any]) -> object:
    """The text of a call's arguments in the model's response (`raw_data.message.tool_calls`,
    the call of the same id) when it reads as the call's `arguments`; else the arguments."""
    arguments, raws = item.get("arguments"), field_of(message, "raw_data", "message", "tool_calls")
    for raw in raws if isinstance(raws, list) else ():
        text = field_of(field_of(raw, "function"), "arguments")
        if field_of(raw, "id") == item["id"] and isinstance(text, str) and _reads_as(text, arguments):
            return text
    return "{}" if arguments is None else arguments


def _reads_as(text: str, arguments: object) -> bool:
    try:
        return bool(json.loads(text) == arguments)
    except ValueError:
        return False
