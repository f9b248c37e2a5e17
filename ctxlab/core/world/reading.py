"""What a fake model reads from a request: its visible text, its summary, the parts of a summary
request, and the values a template put into a text.

Invariants:
- The summary travels as a user message without an id right after the system prompt (first, in
  a request with no system message); every context message the loop stores carries an id. So
  the message at `summary_index` is the summary exactly when it is a user message with an empty
  id.
- A summary request is, in order: the system prompt, the old summary (optional), the messages to
  compress, an optional assistant message of instruction hints (no id), and the compression
  prompt as the last user message (as sent, with the structured-output instruction added to it).
  Reading is lenient: without a leading system message there is no system prompt and no old
  summary, and without a final user message there is no prompt.
- Reading a template back never fills anything: `placeholder_values(fill(t, name=v), ...)`
  returns `v` when the rest of the template does not occur inside `v`.
"""

from __future__ import annotations

import re
import string
from collections.abc import Sequence
from dataclasses import dataclass

from ctxlab.core.messages.blocks import HintBlock, text_pieces
from ctxlab.core.messages.message import Message


def message_text(message: Message) -> str:
    """Every text piece of a message (texts, thinking, hints, call inputs, result texts), one per line.

    >>> from ctxlab.core.messages.message import text_message
    >>> message_text(text_message("user", "a"))
    'a'
    """
    return "\n".join(piece for block in message.blocks for piece in text_pieces(block))


def visible_text(messages: Sequence[Message]) -> str:
    """What a model sees of `messages`, as one text (messages separated by a blank line)."""
    return "\n\n".join(message_text(m) for m in messages)


def summary_index(messages: Sequence[Message]) -> int:
    """Where a request's summary would be: after the system message, or first without one."""
    return 1 if messages and messages[0].role == "system" else 0


def is_summary_message(messages: Sequence[Message], index: int) -> bool:
    """Whether `messages[index]` is the summary: the user message without an id after the system
    message (first, in a request without one)."""
    at = summary_index(messages)
    return index == at and len(messages) > at and messages[at].role == "user" and not messages[at].id


def request_summary(messages: Sequence[Message]) -> str:
    """The summary text a request carries ('' when it has none).

    >>> from ctxlab.core.messages.message import text_message
    >>> request_summary([text_message("system", "s"), text_message("user", "S")])
    'S'
    >>> request_summary([text_message("system", "s"), text_message("user", "U", id="msg-1")])
    ''
    >>> request_summary([text_message("user", "S"), text_message("user", "U", id="msg-1")])
    'S'
    """
    at = summary_index(messages)
    return message_text(messages[at]) if is_summary_message(messages, at) else ""


def without_summary(messages: Sequence[Message]) -> tuple[Message, ...]:
    """A request's messages without its summary message.

    >>> from ctxlab.core.messages.message import text_message
    >>> request = (text_message("system", "s"), text_message("user", "S"), text_message("user", "u", id="m1"))
    >>> [message_text(m) for m in without_summary(request)]
    ['s', 'u']
    """
    return tuple(m for i, m in enumerate(messages) if not is_summary_message(messages, i))


@dataclass(frozen=True, slots=True, kw_only=True)
class SummaryRequestParts:
    """A summary request taken apart (see the module docstring)."""

    system_prompt: str
    old_summary: str
    compressed: tuple[Message, ...]
    instructions: tuple[HintBlock, ...]
    prompt: str


def read_summary_request(messages: Sequence[Message]) -> SummaryRequestParts:
    """The parts of a summary request (read leniently, see the module docstring)."""
    system = bool(messages) and messages[0].role == "system"
    carried = system and len(messages) > 2 and is_summary_message(messages, 1)  # not the prompt itself
    start = 2 if carried else int(system)
    prompted = len(messages) > start and messages[-1].role == "user"
    body = list(messages[start : len(messages) - 1 if prompted else len(messages)])
    instructions: tuple[HintBlock, ...] = ()
    if body and _is_instruction_message(body[-1]):
        instructions = tuple(b for b in body.pop().blocks if isinstance(b, HintBlock))
    return SummaryRequestParts(
        system_prompt=message_text(messages[0]) if system else "",
        old_summary=request_summary(messages) if carried else "",
        compressed=tuple(body),
        instructions=instructions,
        prompt=message_text(messages[-1]) if prompted else "",
    )


def _is_instruction_message(message: Message) -> bool:
    return (
        message.role == "assistant"
        and not message.id
        and bool(message.blocks)
        and all(isinstance(b, HintBlock) for b in message.blocks)
    )


_PLACEHOLDER = re.compile(r"\{(\w+)\}")


def placeholder_values(template: str, name: str, text: str) -> tuple[str, ...]:
    """Every value `{name}` took where `template` (a `fill` template) occurs in `text`, in order.

    Other placeholders match any text; the value is the shortest that lets the rest match, or
    one run of non-space characters when `{name}` ends the template.

    >>> placeholder_values("saved at '{path}'.", "path", "x saved at 'a/b.json'. y saved at 'c'.")
    ('a/b.json', 'c')
    >>> placeholder_values("see {path}", "path", "see a.txt now")
    ('a.txt',)
    """
    pieces = _PLACEHOLDER.split(template)
    if name not in pieces[1::2]:
        return ()
    pattern = []
    captured = False
    for i, piece in enumerate(pieces):
        if i % 2 == 0:
            pattern.append(re.escape(piece))
        elif piece != name or captured:
            pattern.append(r".*?")
        else:
            captured = True
            last = not "".join(pieces[i + 1 :])
            pattern.append(r"(?P<value>\S+)" if last else r"(?P<value>.+?)")
    return tuple(m.group("value") for m in re.finditer("".join(pattern), text, flags=re.DOTALL))


@dataclass(frozen=True, slots=True, kw_only=True)
class ReadFields:
    """The fields a `str.format` template was rendered with, and the text after the template."""

    fields: dict[str, str]
    rest: str


def format_fields(template: str, text: str) -> ReadFields | None:
    """The fields of `text` read back with a `str.format` template; None when it does not match.

    >>> r = format_fields("# A\\n{a}\\n# B\\n{b}!", "# A\\nx\\n# B\\ny z!\\nP.S.")
    >>> r.fields, r.rest
    ({'a': 'x', 'b': 'y z'}, '\\nP.S.')
    """
    parsed = list(string.Formatter().parse(template))
    pattern = []
    seen: set[str] = set()
    for index, (literal, field, _spec, _conversion) in enumerate(parsed):
        pattern.append(re.escape(literal))
        if field is None:
            continue
        lazy = "?" if index < len(parsed) - 1 else ""  # a field that ends the template takes the rest
        if field in seen or not field.isidentifier():
            pattern.append(f".*{lazy}")
        else:
            seen.add(field)
            pattern.append(f"(?P<{field}>.*{lazy})")
    found = re.match("".join(pattern), text, flags=re.DOTALL)
    if found is None:
        return None
    return ReadFields(fields=found.groupdict(), rest=text[found.end() :])
