"""Claude Code session logs (`~/.claude/projects/<project>/<session>.jsonl`), as OpenAI chat
messages.

Each line is an entry with a `type`. `user` and `assistant` entries wrap an Anthropic Messages
`message` (content blocks: `text`, `thinking`, `tool_use`, `tool_result`, `image`), with
`uuid`/`parentUuid` links, `isSidechain` for a sub-agent's lines and `isCompactSummary` for the
summary written after a compaction; `summary` lines title a session; `last-prompt` lines name
the line the session stands at (`leafUuid`); `attachment` lines record context Claude Code adds
to a request (hook output, @-mentioned files, reminders, a message typed while the model
worked), newer versions with the text it sent (`rendered`); `system` lines carry notices such
as compaction boundaries (`subtype: compact_boundary`) and, in newer versions, a slash command
run locally and its output (`subtype: local_command`); further bookkeeping kinds
(`file-history-snapshot`, `queue-operation`, ...) hold no conversation.

Mapping rules (content blocks as in `anthropic`):
- Assistant lines that share a `message.id` are one message: Claude Code writes one line per
  content block of a streamed response, and the tool results of its first calls may come
  between them; those results follow the merged message. A tool the API ran within the answer
  (`server_tool_use`, such as web search) is a call answered by its result block at its place,
  the answer split there, as in a request log (`anthropic.Answer`).
- Sub-agent lines (`isSidechain: true`) stay out of the main conversation: they are the
  sub-agent's own transcript, whose outcome the main conversation receives as its tool's result.
  A file whose first conversation line is a sub-agent's (Claude Code keeps each sub-agent's
  transcript in a file of its own, `agent-<id>.jsonl`) is that sub-agent's conversation: its
  sub-agent lines are read and any main-conversation line is skipped, as noted in the warnings.
- `summary` lines are not messages; `system` lines (compaction boundaries among them) and the
  bookkeeping kinds (titles, snapshots, queue operations, ...) are skipped and counted in the
  warnings, but for a local command's `system` line (`subtype: local_command`: a slash command
  run and its output), whose `content` Claude Code sends as a user message. The summary message
  after a compaction stays a user message, as Claude Code sent it, after the history before the
  compaction (which Claude Code no longer sent): the strategies replayed decide what of it a
  request keeps, as for a Codex compaction.
- Lines Claude Code shows but never sends to the model are skipped and counted: its synthetic
  API-error notices (an assistant line with `isApiErrorMessage` whose model is `<synthetic>`,
  such as "API Error: 529 Overloaded") and display-only lines (`isVirtual`).
- An attachment line's `rendered` text is replayed as user messages (whatever `renderedRole`
  says: a model that takes no system turns gets it so) where the request it went with begins a
  replay turn: after a prompt (it joins that prompt's turn), or after an answer and before the
  next message (it opens the next turn). Within a reply Claude Code sent it beside tool results,
  where a replay turn holds no user text, and after the last answer no request carried it:
  those are counted by attachment kind, as are attachments without `rendered` (their text is
  rendered by templates inside Claude Code, which the log does not hold; a note says so) or
  with one not shaped as Claude Code writes it (`claude_replay`).
- Lines are read in file order. Each names the line it continues (`parentUuid`); a prompt
  that continues a line which already has a continuation is a branch (an edited prompt, a
  rewind), as is a second prompt that continues no line (a rewind to the first prompt), and
  Claude Code goes on from the line the last `last-prompt` names, or the last line's branch
  (`claude_branches` states the rule). When the log can be read twice (a file, a scenario's
  text), a first read finds the branches the session left, whose lines are then skipped and
  counted, with a note per fork (and one for the lines past a named line); a session rewound to
  before its first prompt and not continued is an error at that `last-prompt`. A log read once
  (lines handed over as a stream) is replayed as written, with a note where the session branched
  and the line it continues, or started anew; its `last-prompt` lines are not followed.
- A line Claude Code wrote again, its uuid and all it holds of the conversation repeating an
  earlier line's (a session reopened re-appends its lines), is read once, as Claude Code reads
  it, and the copy counted (`claude_branches.Copies`).
- A line of a `type` this importer does not know (Claude Code adds bookkeeping kinds from one
  version to the next) is skipped and counted too, unless it carries a `message`: then it may
  hold conversation, and it is an error. A line without a string `type` is an error.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from ctxlab.workloads.importers.base import Entry, Reader, Report, Wire, field_of
from ctxlab.workloads.importers.claude_branches import COPY, Branches, Copies, Fork, branches_left, is_prompt
from ctxlab.workloads.importers.claude_replay import Replay

SKIPPED = frozenset(
    {
        "summary",
        "last-prompt",
        "file-history-snapshot",
        "queue-operation",
        "progress",
        "custom-title",
        "ai-title",
        "agent-name",
    }
)
KINDS = frozenset({"user", "assistant", "system", "attachment"}) | SKIPPED
LOCAL_COMMAND = "local_command"
"""The subtype of the `system` lines Claude Code sends as user messages (a slash command's run and
output)."""
SYNTHETIC_MODEL = "<synthetic>"
"""The model Claude Code names on the assistant messages it writes itself (API-error notices)."""
LEFT = "line of a branch the session left (a prompt edited or rewound)"
CLEARED = (
    "the session was rewound to before its first prompt (a last-prompt line naming no line) and "
    "went on with nothing: it has no conversation to replay"
)
CONVERSATION = frozenset({"user", "assistant", "summary"})


def is_claude_code(values: list[object]) -> bool:
    """Entries of a session log: the first a typed line, and a conversation line (or a session
    title) with Claude Code's envelope among them (a line of a kind not known here, such as a
    newer version's bookkeeping, does not make the format doubtful); or, when a log opens with
    more bookkeeping lines than detection reads (hook progress, file snapshots, queued
    prompts), lines that are all of Claude Code's kinds as it writes them."""
    typed = [v for v in values if isinstance(v, Mapping) and isinstance(v.get("type"), str)]
    if not typed or typed[0] is not values[0]:
        return False
    return any(
        v["type"] in CONVERSATION and ("sessionId" in v or "leafUuid" in v or "uuid" in v) for v in typed
    ) or all(_is_bookkeeping(v) for v in values)


def _is_bookkeeping(value: object) -> bool:
    """A line of one of Claude Code's kinds with its session id (or a file snapshot's)."""
    return (
        isinstance(value, Mapping)
        and value.get("type") in KINDS
        and (isinstance(value.get("sessionId"), str) or isinstance(value.get("snapshot"), Mapping))
    )


def _unknown_kind(kind: object, detail: str = "") -> str:
    return f"unknown entry type {kind!r}{detail}; expected one of {', '.join(sorted(KINDS))}"


_A_LIST = (
    "a JSON list, not an entry: a Claude Code session log holds one entry (a JSON object) a "
    "line; write each item of the list on a line of its own"
)


def _unknown(value: object, kind: object, number: int, report: Report) -> str:
    """Count a line of a kind not known here and return its kind, or raise when it cannot be one
    of Claude Code's bookkeeping lines (no string `type`, or a `message` that may hold
    conversation)."""
    if isinstance(value, list):
        raise report.error(number, _A_LIST)
    if not isinstance(value, Mapping) or not isinstance(kind, str):
        raise report.error(number, _unknown_kind(kind))
    if isinstance(value.get("message"), Mapping):
        raise report.error(number, _unknown_kind(kind, " carries a message"))
    report.skip(f"{kind} (an entry type not known here)")
    return kind


def survey(entries: Iterator[Entry]) -> Reader:
    """The reader of a session log whose lines `entries` gave once already: it skips the
    branches the session left."""
    return partial(read_claude_code, branches=branches_left(entries))


def read_claude_code(
    entries: Iterator[Entry], report: Report, branches: Branches | None = None
) -> Iterator[Wire]:
    """The main conversation of a session log (see the module docstring); `branches`, when a
    first read found them, are the lines the session left.

    Raises:
        TraceError: at a line that is not one of a session log; and, when no line was
            conversation, at the first line of an unknown kind (the file is then likely of
            another format, such as a rollout forced with `--format claude-code`).
    """
    unknown: list[tuple[int, str]] = []
    found = False
    for wire in _conversation(entries, report, unknown, branches):
        found = True
        yield wire
    if not found and branches is not None and branches.cleared:
        raise report.error(branches.cleared, CLEARED)
    if not found and unknown:
        raise report.error(unknown[0][0], _unknown_kind(unknown[0][1]))


def _conversation(
    entries: Iterator[Entry], report: Report, unknown: list[tuple[int, str]], branches: Branches | None
) -> Iterator[Wire]:
    """The main conversation's messages; the first line of an unknown kind goes to `unknown`."""
    gate, replay = _Gate(report, unknown, branches), Replay(report)
    for number, value in entries:
        if field_of(value, "type") == "attachment":
            if gate.keeps(number, value):
                replay.attachment(value, number)
            continue
        message = gate.message(number, value)
        if message is None:
            continue
        if value["type"] == "assistant":
            yield from replay.assistant(message, number)
        else:
            yield from replay.user(message, number)
    yield from replay.finish()


class _Gate:
    """Which lines hold the conversation read: lines of Claude Code's kinds, of the side the
    file's first conversation line is on (the main conversation, or a sub-agent's), and on no
    branch the session left; every other line is counted (or, of an unknown kind, noted in
    `unknown`)."""

    def __init__(self, report: Report, unknown: list[tuple[int, str]], branches: Branches | None) -> None:
        self.report, self.unknown = report, unknown
        self.side: bool | None = None  # whether the conversation read is a sub-agent's
        self.forks = Forks(report) if branches is None else None
        self.left = _noted(branches, report).left if branches is not None else frozenset()
        self.copies = Copies()
        # the first read's copies, found where every line is digested once: not digested again
        self.copied = branches.copies if branches is not None else None

    def message(self, number: int, value: object) -> Mapping[str, Any] | None:
        """The message of a conversation line, or None for a line that is not one."""
        kind = field_of(value, "type")
        if not isinstance(value, Mapping) or kind not in KINDS:
            self.unknown[:] = self.unknown or [(number, _unknown(value, kind, number, self.report))]
            return None
        subtype = value.get("subtype") if kind == "system" else None
        if kind in SKIPPED or (kind == "system" and subtype != LOCAL_COMMAND):
            self.report.skip(f"{kind}:{subtype}" if subtype else str(kind))
            return None
        if self._copy(number, value):
            self.report.skip(COPY)
            return None
        if not self._on_side(value):
            return None
        message = _local_command(value) if kind == "system" else value.get("message")
        if kind == "system" and message is None:
            self.report.skip(f"system:{LOCAL_COMMAND} (no text content)")
            return None
        if not isinstance(message, Mapping):
            raise self.report.error(number, f"an entry of type {kind!r} without a 'message' object")
        if value.get("uuid") in self.left:
            self.report.skip(LEFT)
            return None
        if self.forks is not None:
            self.forks.see(value, number, isinstance(message.get("content"), str) and kind == "user")
        if (why := _unsent(value, message)) is not None:
            self.report.skip(why)
            return None
        return message

    def keeps(self, number: int, value: object) -> bool:
        """Whether an attachment line is of the conversation read: of its side (any side before
        the first conversation line) and on no branch left; others are counted."""
        if not isinstance(value, Mapping):
            return False
        if self._copy(number, value):
            self.report.skip(COPY)
            return False
        if self.side is not None and not self._on_side(value):
            return False
        if value.get("uuid") in self.left:
            self.report.skip(LEFT)
            return False
        return True

    def _copy(self, number: int, value: Mapping[str, Any]) -> bool:
        """Whether the line is one Claude Code wrote again. The first read's answer holds: with
        one history, a line's id names one line, so its copies are exactly its later lines."""
        return number in self.copied if self.copied is not None else self.copies.again(value)

    def _on_side(self, value: Mapping[str, Any]) -> bool:
        if self.side is None:
            self.side = value.get("isSidechain") is True
            if self.side:
                self.report.notes.append(
                    "the file is a sub-agent's transcript (isSidechain): its conversation is read"
                )
        if bool(value.get("isSidechain")) != self.side:
            self.report.skip("main-conversation line" if self.side else "isSidechain sub-agent line")
            return False
        return True


def _local_command(value: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The user message Claude Code sends for a local command's `system` line: its `content` (a
    string or content blocks); None when it has none."""
    body = value.get("content")
    return {"role": "user", "content": body} if isinstance(body, str | list) else None


def _unsent(value: Mapping[str, Any], message: Mapping[str, Any]) -> str | None:
    """Why Claude Code never sends a conversation line to the model (as it is counted), or None
    for a line it sends: an API-error notice it wrote itself, or a display-only line."""
    if value.get("isVirtual") is True:
        return f"{value['type']} line shown only (isVirtual), never sent"
    if value.get("isApiErrorMessage") is True and message.get("model") == SYNTHETIC_MODEL:
        return "API-error notice Claude Code wrote (isApiErrorMessage), never sent"
    return None


@dataclass(slots=True)
class Forks:
    """Where the main conversation branches: a prompt whose `parentUuid` already has a child
    (Claude Code writes one when a prompt is edited or the conversation rewound, and resumes
    from the last line's branch). Holds the uuids and lines of the lines read, never content.

    A log is replayed in file order, so a branch the session left is replayed too; each fork
    is a note naming its lines, so the replay is not taken for the session's own conversation.
    """

    report: Report
    lines: dict[str, int] = field(default_factory=dict)
    parents: set[str] = field(default_factory=set)
    start: int = 0  # the line of the last prompt that continues no line

    def see(self, value: Mapping[str, Any], number: int, prompt: bool) -> None:
        """Record a conversation line; note a fork at a prompt (text only, never a result)."""
        parent = value.get("parentUuid")
        if "parentUuid" in value and parent is None and is_prompt(value):
            if self.start:
                self.report.notes.append(
                    f"line {number}: the session starts anew (rewound to its first prompt): this prompt "
                    f"continues no line, as the one of line {self.start} does; the conversation before "
                    "it is replayed as written"
                )
            self.start = number
        if isinstance(parent, str):
            if prompt and parent in self.parents:
                self.report.notes.append(
                    f"line {number}: the session branches (a prompt edited or rewound): this line "
                    f"continues line {self.lines[parent]}, so the lines between them are a branch "
                    "Claude Code left, replayed here as written"
                    if parent in self.lines
                    else f"line {number}: the session branches (a prompt edited or rewound) at "
                    f"{parent!r}, a line not in the file; the branch it left is replayed as written"
                )
            self.parents.add(parent)
        if isinstance(value.get("uuid"), str):
            self.lines[value["uuid"]] = number


def _noted(branches: Branches, report: Report) -> Branches:
    """`branches`, each fork and the lines past a named leaf noted in the report."""
    for fork in branches.forks:
        report.notes.append(_fork_note(fork))
    if (pin := branches.pin) is not None:
        report.notes.append(
            f"line {pin.marker}: the session stands at line {pin.leaf} (a last-prompt line names it), "
            f"so the {pin.left_lines} lines continuing that one, from line {pin.left_from}, are not replayed"
        )
    return branches


def _fork_note(fork: Fork) -> str:
    if fork.anew:
        return (
            f"line {fork.line}: the session starts anew (rewound to its first prompt): this prompt "
            f"continues no line, and the {fork.left_lines} lines of the conversation it left, from line "
            f"{fork.left_from}, are not replayed"
        )
    continued = f"line {fork.continued}" if fork.continued else "a line not in the file"
    return (
        f"line {fork.line}: the session branches (a prompt edited or rewound): this line continues "
        f"{continued}, and the {fork.left_lines} lines of the branch it left, from line "
        f"{fork.left_from}, are not replayed"
    )
