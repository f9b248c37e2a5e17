"""tau-bench results (`historical_trajectories/*.json`, a run's results file), as OpenAI chat
messages.

A results file is a JSON list of task runs, `{task_id, trial, reward, info, traj}`, whose `traj`
lists the OpenAI chat messages of the run as its agent sent and received them: the system
prompt (the domain's policy), the simulated user's messages as user messages, the agent's
answers and calls, and the tools' results (`tool_call_id`, and a `name` the replay has no use
for).

Mapping rules:
- A message is mapped by its role: its `content` (null is '') is the text, an assistant's
  `tool_calls` its calls (arguments that are an object are their JSON text), a tool message the
  result of the call its `tool_call_id` names, which must come before it.
- A call id the run uses again for another call (tau-bench's own trajectories do) is kept as
  written: the replay renames the later call `<id>_dupN` and gives each result to the earliest
  call of its id still unanswered (`ctxlab.workloads.trace`).
- `reward` and `info` (the task, the user simulator's cost, the grading) are not messages. The
  file declares no tool schemas, so the replay reads them off the calls.
- `ctxlab import` writes one conversation: the file's run `--session N` (0, the first, unless
  given; counted in file order) is read; the others are counted and a note names the run taken
  (its `task_id` and `trial`). A JSONL file of runs, or of lists of runs, is read the same way.
- The user simulator's last message, when it ends the run (`###STOP###`), is skipped and
  counted: the agent never received it, so a replay of it would make a request the run never
  made.

Invariants:
- Every error is at the line of the entry holding the run (a JSON document's first line),
  naming the message by its index in `traj`.
"""

from __future__ import annotations

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
    system,
    tool,
    user,
)

KIND = "further run (a task run of its own)"
EXPECTED = "not tau-bench results: expected a JSON list of task runs, each with a 'traj' list of messages"


def runs_of(value: object) -> list[Any] | None:
    """The task runs of an entry: a list of them, or one run."""
    listed = value if isinstance(value, list) else [value]
    return listed if listed and all(_is_run(item) for item in listed[:5]) else None


def _is_run(value: object) -> bool:
    return isinstance(value, Mapping) and isinstance(value.get("traj"), list) and "task_id" in value


def taken_note(runs: str, name: str, total: int, session: int) -> str:
    """The note naming the one of `total` runs (`runs` says of what) read, the `session`-th."""
    taken = "the first" if session == 0 else f"session {session}"
    return (
        f"the file holds {total} {runs}; {taken} ({name}) is replayed and the others counted, "
        "as a replay is of one conversation: to replay another, give --session N "
        "(`session: N` in a scenario's trace), counted from 0 in file order"
    )


def read_tau_bench(entries: Iterator[Entry], report: Report) -> Iterator[Wire]:
    """The messages of a results file's chosen run (see the module docstring)."""
    taken = None
    for number, _, run in chosen_run(entries, report, runs_of, expected=EXPECTED, kind=KIND, runs="runs"):
        taken = f"task_id {run.get('task_id')!r}, trial {run.get('trial')!r}"
        calls = Calls(report)
        messages = (_message(m, f"traj[{index}]", number, calls) for index, m in report.each(run["traj"]))
        yield from without_closing_stop(messages, report)
    total = 1 + report.skipped[KIND]
    if taken is not None and total > 1:
        report.notes.append(taken_note("runs", taken, total, report.session))


STOP_TOKENS = ("###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###")
"""What the user simulators of tau-bench (the first) and tau2 (all three) write to end the
conversation: the run stops on such a message, and the agent never receives it."""
CLOSING_STOP = "user simulator's closing stop message (never sent to the agent)"


def without_closing_stop(messages: Iterator[Wire], report: Report) -> Iterator[Wire]:
    """`messages` without a last user message holding a stop token, counted as skipped: it ends
    the episode, so replaying it would make a request the run never made."""
    last: Wire | None = None
    for message in messages:
        if last is not None:
            yield last
        last = message
    if last is None:
        return
    body = last["content"]
    text = body if isinstance(body, str) else "".join(str(p.get("text", "")) for p in body)
    if last["role"] == "user" and any(token in text for token in STOP_TOKENS):
        report.skip(CLOSING_STOP)
    else:
        yield last


def _message(message: object, where: str, number: int, calls: Calls) -> Wire:
    """One message of a run's `traj`, as the replay reads it."""
    report = calls.report
    if not isinstance(message, Mapping):
        raise report.error(number, f"{where} is not a message object")
    role, text = message.get("role"), text_of_content(message.get("content"), where, number, report)
    if role == "system":
        return system(text)
    if role == "user":
        return user(text)
    if role == "assistant":
        listed = message.get("tool_calls") or []
        return assistant(
            text, [_call(item, f"{where}.tool_calls[{k}]", number, calls) for k, item in enumerate(listed)]
        )
    if role == "tool":
        return tool(calls.answer(message.get("tool_call_id"), number, key=f"{where}.tool_call_id"), text)
    raise report.error(number, f"{where}: unknown role {role!r}")


def text_of_content(value: object, where: str, number: int, report: Report) -> str:
    """A message's text: its `content`, '' for null.

    Raises:
        TraceError: content that is neither a string nor null.
    """
    if value is None or isinstance(value, str):
        return value or ""
    raise report.error(number, f"{where}.content is {type(value).__name__}, not text or null")


def _call(item: object, where: str, number: int, calls: Calls) -> Wire:
    """An OpenAI tool call as the run wrote it, its id declared."""
    call_id, function = field_of(item, "id"), field_of(item, "function")
    name, arguments = field_of(function, "name"), field_of(function, "arguments")
    if not isinstance(call_id, str) or not isinstance(name, str):
        raise calls.report.error(number, f"{where} is not a tool call with a string 'id' and 'function.name'")
    return call(calls.declare(call_id), name, "{}" if arguments is None else arguments)
