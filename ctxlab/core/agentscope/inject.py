"""Runtime-state hints: time, tasks, context usage and repeated tool errors (AgentScope 2.0.11).

Before every reasoning step, after compression, the agent may append one `HintBlock` to its reply
message. This module decides whether, and with which text; the caller appends it.

Invariants:
- Pure: the context, the task board, `now`, the parameters, the counts and the texts are all
  arguments. Nothing here reads a clock.
- The scan for earlier hints reads assistant-role messages of any agent, newest message and
  newest block first. A hint counts as ours only if its `source` equals the configured source;
  it then records a time if its text contains `<current-time>` and tells of tasks if it contains
  `<tasks>` (substrings, so a template or extra field that contains them interferes, as in
  AgentScope). A call of any task tool, whatever its outcome, also tells of tasks. The scan stops
  once both are settled, so what it finds is the newest own hint that records a time and whether
  any message tells of tasks: `scan_hints` computes that as a fold from the oldest message and
  block, which `HintScanner` resumes after the messages a context shares with the previous one,
  and a long message after the blocks it begins with (a reply grows a round at every call).
- The tool-error streak is read from the newest result back, so it costs the streak, not the
  reply.
- Time is injected when no time is recorded, when the recorded one cannot be parsed back with
  `time_format`, or unless `0 <= elapsed hours <= time_interval` (so a clock that went backwards
  re-injects). `%Z` reads UTC and GMT alone, as on a host whose zone is UTC (`read_time`:
  `strptime` also reads the host's own zone names). A naive recorded time takes the zone
  written next to it in `<timezone>`, or the configured zone. A format without a date parses to
  1900 and re-injects every step.
- The context-length line appears only at `cur_iter == 0`, when `input_tokens > (trigger -
  buffer) * context_size` (strict, in float); it shows `int(trigger * context_size)`. Its
  compress-now suffix needs the compression tool and no task in progress.
- The tool-error line needs the context's last message to be this agent's, its newest tool result
  an error, and the newest run of same-name errors whose JSON-normalised arguments equal the
  newest one's to be at least `tool_retries_limit` long; it shows that run's length.
- Lines are `<key>value</key>` in the order current-time, timezone, tasks, context-length,
  tool-error, then `extra_fields` merged with `dict.update` (a standard key is overwritten in
  place). Extras never cause an injection. The lines fill the template with `str.replace`.
"""

from __future__ import annotations

import datetime as dt
import functools
import itertools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ctxlab.core.agentscope.task_args import TASK_TOOL_NAMES
from ctxlab.core.agentscope.tasks import Board, task_counts
from ctxlab.core.messages.blocks import Block, HintBlock, ToolCallBlock, ToolResultBlock
from ctxlab.core.messages.memo import RESUMED_BLOCKS, LeadingFold
from ctxlab.core.messages.message import Message, same_leading
from ctxlab.core.messages.templates import fill
from ctxlab.core.messages.tools import ToolSchema

DEFAULT_INJECTION_SOURCE = '{"label": "System", "sublabel": "Runtime State"}'
DEFAULT_TIME_FORMAT = "%Y-%m-%dT%H:%M:%S"
_TIME = re.compile(r"<current-time>(.*?)</current-time>")
_ZONE = re.compile(r"<timezone>(.*?)</timezone>")


@dataclass(frozen=True, slots=True, kw_only=True)
class InjectionParams:
    """`InjectionConfig`'s fields as core values (defaults: AgentScope 2.0.11).

    The deprecated `context_buffer_ratio` override is not here: the caller passes the buffer in
    force. `template` and `tool_retries_hint` left as None take the texts' wording.
    """

    inject_runtime_state: bool = True
    timezone: str = "UTC"
    time_format: str = DEFAULT_TIME_FORMAT
    time_interval: float = 0.5  # hours
    tool_retries_limit: int = 3
    tool_retries_hint: str | None = None
    template: str | None = None
    injection_source: str = DEFAULT_INJECTION_SOURCE
    task_tool_names: tuple[str, ...] = TASK_TOOL_NAMES
    extra_fields: tuple[tuple[str, str], ...] = ()


class HintTexts(Protocol):
    """The wording of the hint (`ctxlab.texts.Texts` provides it)."""

    @property
    def injection_template(self) -> str: ...  # {runtime_state}
    @property
    def tool_retries_hint(self) -> str: ...  # {tool_name} {count}
    @property
    def tasks_hint(self) -> str: ...  # {in_progress} {pending}
    @property
    def context_length_hint(self) -> str: ...  # {count} {trigger}
    @property
    def context_length_compress_suffix(self) -> str: ...  # {tool}
    @property
    def compress_tool(self) -> ToolSchema: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class ContextGauge:
    """What the context-length line needs: the request's tokens and the compression settings.

    `input_tokens` is the count of the whole next request (system prompt, summary, context, tool
    schemas) after this step's compression and before the hint; the caller computes it only when
    `needs_input_tokens` says so, and passes None otherwise.
    """

    input_tokens: int | None
    trigger_ratio: float
    buffer_ratio: float
    context_size: int
    compression_tool_enabled: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolErrorStreak:
    """The same call failing again and again: the tool's name and how many times in a row."""

    tool_name: str
    count: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Injection:
    """An injected hint, its `<key>value</key>` fields in order, and which keys caused it."""

    block: HintBlock
    fields: tuple[tuple[str, str], ...]
    causes: tuple[str, ...]  # of: current-time, tasks, context-length, tool-error


def resolve_timezone(name: str) -> dt.tzinfo:
    """`ZoneInfo(name)`, or UTC when the name is not a zone (AgentScope's fallback).

    A directory name such as `America` raises `IsADirectoryError`, as it does in AgentScope.

    >>> resolve_timezone("Asia/Shanghai"), resolve_timezone("Mars/Base")
    (zoneinfo.ZoneInfo(key='Asia/Shanghai'), datetime.timezone.utc)
    """
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return dt.UTC


def local_now(now: dt.datetime, timezone: str) -> dt.datetime:
    """`now` (timezone-aware) as the wall-clock time of `timezone`.

    Raises:
        ValueError: `now` is naive.
    """
    if now.tzinfo is None or now.utcoffset() is None:
        raise ValueError(f"now must be timezone-aware, got {now!r}; take it from the VirtualClock")
    return now.astimezone(resolve_timezone(timezone))


def current_time_text(now: dt.datetime, params: InjectionParams) -> str:
    """The time as the compression prompt shows it: `strftime(time_format) + " (" + timezone + ")"`.

    >>> current_time_text(dt.datetime(2026, 1, 1, tzinfo=dt.UTC), InjectionParams())
    '2026-01-01T00:00:00 (UTC)'
    """
    return local_now(now, params.timezone).strftime(params.time_format) + " (" + params.timezone + ")"


def needs_input_tokens(params: InjectionParams, cur_iter: int) -> bool:
    """Whether this step's hint depends on the request's token count (the first step of a reply).

    >>> needs_input_tokens(InjectionParams(), 0), needs_input_tokens(InjectionParams(), 1)
    (True, False)
    """
    return params.inject_runtime_state and cur_iter == 0


@dataclass(frozen=True, slots=True)
class HintScan:
    """What the earlier messages tell: the newest own hint that records a time (its text), and
    whether any tells of tasks."""

    last_time_text: str | None = None
    told_tasks: bool = False


def scan_message(scan: HintScan, message: Message, params: InjectionParams) -> HintScan:
    """The scan of a context after one more (newer) message: `scan_block` over an assistant
    message's blocks, oldest first. A long message (a reply that grows a round at every call) is
    read by resuming the read of the blocks it begins with, so it costs the blocks it gained."""
    if message.role != "assistant":
        return scan
    if len(message.blocks) >= RESUMED_BLOCKS:
        return _SCANNED(message.blocks, scan, params)
    for block in message.blocks:
        scan = scan_block(scan, block, params)
    return scan


def scan_block(scan: HintScan, block: Block, params: InjectionParams) -> HintScan:
    """The scan after one more block of an assistant message: an own hint may record a time and
    tell of tasks; a call of a task tool tells of tasks."""
    if isinstance(block, HintBlock) and block.source == params.injection_source:
        text = block.text
        timed = "<current-time>" in text
        tasks = not scan.told_tasks and "<tasks>" in text
        if timed or tasks:
            return HintScan(text if timed else scan.last_time_text, scan.told_tasks or tasks)
    elif isinstance(block, ToolCallBlock) and not scan.told_tasks and block.name in params.task_tool_names:
        return HintScan(scan.last_time_text, True)
    return scan


_SCANNED: LeadingFold[Block, HintScan] = LeadingFold(scan_block)


def scan_hints(messages: Sequence[Message], params: InjectionParams) -> HintScan:
    """The scan of `messages`, oldest first."""
    scan = HintScan()
    for message in messages:
        scan = scan_message(scan, message, params)
    return scan


@dataclass(slots=True)
class HintScanner:
    """`scan_hints` context after context, resuming after the messages shared by identity.

    Stored messages are immutable, so the same object adds the same to the scan; a context that
    appends to the previous one costs O(new messages) (plus a C-speed identity scan).
    """

    params: InjectionParams
    _messages: list[Message] = field(default_factory=list)
    _scans: list[HintScan] = field(default_factory=lambda: [HintScan()])  # after each message

    def scan(self, messages: Sequence[Message]) -> HintScan:
        """`scan_hints(messages, params)`."""
        same = same_leading(self._messages, messages)
        del self._messages[same:], self._scans[same + 1 :]
        for message in messages[same:]:
            self._scans.append(scan_message(self._scans[-1], message, self.params))
            self._messages.append(message)
        return self._scans[-1]


@functools.lru_cache(maxsize=256)
def recorded_time(text: str, params: InjectionParams) -> dt.datetime | None:
    """The time an earlier hint recorded, aware, or None when it cannot be read back.

    Memoised: the same hint is read back before every call until a newer one replaces it.

    >>> recorded_time("<current-time>2026-01-01T08:00:00</current-time><timezone>Asia/Shanghai</timezone>",
    ...     InjectionParams()).isoformat()
    '2026-01-01T08:00:00+08:00'
    """
    found = _TIME.search(text)
    if found is None:
        return None
    try:
        recorded = read_time(found.group(1).strip(), params.time_format)
    except ValueError:
        return None
    if recorded.tzinfo is not None:
        return recorded
    zone = _ZONE.search(text)
    return recorded.replace(tzinfo=resolve_timezone(zone.group(1).strip() if zone else params.timezone))


HOST_ZONE_NAMES = ("UTC", "GMT")
"""The zone names `strptime`'s `%Z` reads on a host whose local zone is UTC."""
_DIRECTIVE = re.compile(r"(%.)", re.DOTALL)


def read_time(text: str, time_format: str) -> dt.datetime:
    """`datetime.strptime(text, time_format)` as on a host whose local zone is UTC.

    `strptime`'s `%Z` reads UTC, GMT and the names of the host's own zone (`time.tzname`), so
    whether AgentScope reads back a time written as `EST` depends on the machine it runs on. A
    run must not: `%Z` here reads `HOST_ZONE_NAMES` alone (in any case, as `strptime` does), the
    same on every machine, as AgentScope reads on a server whose zone is UTC.

    Raises:
        ValueError: the text does not parse with the format.

    >>> read_time("2026-01-01 08:00 utc", "%Y-%m-%d %H:%M %Z").isoformat()
    '2026-01-01T08:00:00'
    >>> read_time("2026-01-01 08:00 EST", "%Y-%m-%d %H:%M %Z")
    Traceback (most recent call last):
    ValueError: time data '2026-01-01 08:00 EST' does not match format '%Y-%m-%d %H:%M %Z'
    """
    parts = _DIRECTIVE.split(time_format)
    zones = [k for k, part in enumerate(parts) if part == "%Z"]
    if not zones:
        return dt.datetime.strptime(text, time_format)
    for names in itertools.product(HOST_ZONE_NAMES, repeat=len(zones)):
        for k, name in zip(zones, names, strict=True):
            parts[k] = name
        try:
            return dt.datetime.strptime(text, "".join(parts))
        except ValueError:
            continue
    raise ValueError(f"time data {text!r} does not match format {time_format!r}")


def time_due(last_time_text: str | None, now_local: dt.datetime, params: InjectionParams) -> bool:
    """Whether the time must be injected again (rules: module docstring)."""
    if last_time_text is None:
        return True
    recorded = recorded_time(last_time_text, params)
    if recorded is None:
        return True
    # Same-zone subtraction is wall-clock arithmetic in Python; AgentScope computes it this way.
    elapsed_hours = (now_local - recorded).total_seconds() / 3600
    return not (0 <= elapsed_hours <= params.time_interval)


def _normalised(raw: str) -> str:
    try:
        return json.dumps(json.loads(raw), sort_keys=True)
    except (TypeError, ValueError):
        return raw.strip()


def repeated_tool_error(messages: Sequence[Message], agent_name: str, limit: int) -> ToolErrorStreak | None:
    """The newest run of identical failing calls in this agent's last message, if it reaches `limit`."""
    if not messages or messages[-1].role != "assistant" or messages[-1].name != agent_name:
        return None
    last = messages[-1]
    tool_name: str | None = None
    streak: list[str] = []
    for block in reversed(last.blocks):  # newest first: the run ends at its first other result
        if not isinstance(block, ToolResultBlock):
            continue
        if block.state != "error" or tool_name not in (None, block.name):
            break
        tool_name = block.name
        streak.append(block.id)
    if tool_name is None or len(streak) < limit:
        return None
    inputs = {b.id: b.input for b in last.blocks if isinstance(b, ToolCallBlock)}
    arguments = [_normalised(inputs.get(call_id, "")) for call_id in streak]
    count = next((i for i, value in enumerate(arguments) if value != arguments[0]), len(arguments))
    return ToolErrorStreak(tool_name=tool_name, count=count) if count >= limit else None


def context_length_line(gauge: ContextGauge, in_progress: int, texts: HintTexts) -> str | None:
    """The context-length line, or None while the request is below the near-compression zone."""
    if gauge.input_tokens is None:
        raise ValueError("input_tokens is needed at cur_iter 0 (see needs_input_tokens); count the request")
    trigger_tokens = int(gauge.trigger_ratio * gauge.context_size)
    if not gauge.input_tokens > (gauge.trigger_ratio - gauge.buffer_ratio) * gauge.context_size:
        return None
    line = fill(texts.context_length_hint, count=gauge.input_tokens, trigger=trigger_tokens)
    if gauge.compression_tool_enabled and in_progress == 0:
        line += fill(texts.context_length_compress_suffix, tool=texts.compress_tool.name)
    return line


def _tool_error_line(streak: ToolErrorStreak, params: InjectionParams, texts: HintTexts) -> str:
    template = params.tool_retries_hint if params.tool_retries_hint is not None else texts.tool_retries_hint
    # Two replaces in this order, as AgentScope fills it: a `{count}` in a tool name is filled too.
    return template.replace("{tool_name}", streak.tool_name).replace("{count}", str(streak.count))


def runtime_injection(
    *,
    messages: Sequence[Message],
    board: Board,
    now: dt.datetime,
    params: InjectionParams,
    texts: HintTexts,
    agent_name: str,
    cur_iter: int,
    gauge: ContextGauge,
    scan: HintScan | None = None,
) -> Injection | None:
    """The hint to append before this reasoning step, or None (rules: module docstring).

    `scan` may carry `scan_hints(messages, params)` (a `HintScanner` keeps it across calls).
    """
    if not params.inject_runtime_state:
        return None
    now_local = local_now(now, params.timezone)
    counts = task_counts(board)
    scan = scan_hints(messages, params) if scan is None else scan
    fields: dict[str, str] = {}
    if time_due(scan.last_time_text, now_local, params):
        fields["current-time"] = now_local.strftime(params.time_format)
        fields["timezone"] = params.timezone
    if (counts["pending"] > 0 or counts["in_progress"] > 0) and not scan.told_tasks:
        fields["tasks"] = fill(texts.tasks_hint, in_progress=counts["in_progress"], pending=counts["pending"])
    if cur_iter == 0 and (line := context_length_line(gauge, counts["in_progress"], texts)) is not None:
        fields["context-length"] = line
    streak = repeated_tool_error(messages, agent_name, params.tool_retries_limit)
    if streak is not None:
        fields["tool-error"] = _tool_error_line(streak, params, texts)
    if not fields:
        return None
    causes = tuple(key for key in fields if key != "timezone")
    fields.update(params.extra_fields)
    state = "\n".join(f"<{key}>{value}</{key}>" for key, value in fields.items())
    template = params.template if params.template is not None else texts.injection_template
    block = HintBlock(hint=template.replace("{runtime_state}", state), source=params.injection_source)
    return Injection(block=block, fields=tuple(fields.items()), causes=causes)


def runtime_hint(
    *,
    messages: Sequence[Message],
    board: Board,
    now: dt.datetime,
    params: InjectionParams,
    texts: HintTexts,
    agent_name: str,
    cur_iter: int,
    gauge: ContextGauge,
) -> HintBlock | None:
    """The hint block of `runtime_injection`, or None."""
    injection = runtime_injection(
        messages=messages,
        board=board,
        now=now,
        params=params,
        texts=texts,
        agent_name=agent_name,
        cur_iter=cur_iter,
        gauge=gauge,
    )
    return None if injection is None else injection.block
