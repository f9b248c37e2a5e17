"""What a transcript holds, read from its script alone, for the transcript tests' guards: the
settings each test derives from a transcript, and whether a strategy can act on it at all (its
eligibility), are stated with these measures and no strategy's code, so a guard holding that a
strategy acts on every eligible transcript checks the strategy against an independent account.

Invariants:
- Every measure is pure and reads the script only (no preset, no package, no token counter).
- `exchange_messages` counts the messages of the transcript's last request as a chat history:
  per turn the user's message, per round the model's answer and one message of its results, and
  each earlier turn's final answer; the last request is the longest, as no message is dropped.
- `choice` picks an option by a digest of the transcript's path, so adding a sample never
  changes which option another sample gets.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from ctxlab.core.messages.blocks import Part, TextBlock
from ctxlab.core.world.script import Script, ScriptedCall

T = TypeVar("T")


def choice(options: Sequence[T], transcript: str) -> T:
    """The option for `transcript`, the same whatever other samples there are."""
    return options[choice_index(len(options), transcript)]


def choice_index(count: int, transcript: str) -> int:
    """The index `choice` takes among `count` options for `transcript`."""
    return zlib.crc32(transcript.encode()) % count


def earlier_calls(script: Script) -> tuple[ScriptedCall, ...]:
    """The calls of every turn but the last (their results are older than the last user message)."""
    return tuple(call for turn in script.turns[:-1] for r in turn.rounds for call in r.calls)


def only_text(call: ScriptedCall) -> str | None:
    """A call's result when it is one text (or nothing: the empty text), else None."""
    match call.result:
        case None | ():
            return ""
        case (TextBlock(text=text),):
            return text
        case _:
            return None


def exchange_messages(script: Script) -> int:
    """The messages of the transcript's last request (see the module invariants)."""
    turns = script.turns
    return sum(1 + 2 * len(turn.rounds) for turn in turns) + max(len(turns) - 1, 0)


def earlier_items(script: Script) -> int:
    """At least how many session items the turns before the last leave: each user message, each
    call and its result, and each non-empty final answer (a round's text and thinking, items too,
    are not counted)."""
    earlier = script.turns[:-1]
    return sum(1 + bool(t.final) for t in earlier) + 2 * len(earlier_calls(script))


def share_of(total: int, share: float) -> int:
    """`share` of `total`, at least 1."""
    return max(int(total * share), 1)


def _texts(parts: tuple[Part, ...]) -> int:
    return sum(len(p.text) for p in parts if isinstance(p, TextBlock))


def request_chars(script: Script) -> int:
    """The text characters of the transcript's last request: the system prompt, every user text,
    round text, call input and result text, and each final answer but the last (thinking and
    media not counted)."""
    rounds = [r for turn in script.turns for r in turn.rounds]
    return (
        len(script.system_prompt)
        + sum(_texts(turn.user) + len(turn.final) for turn in script.turns)
        - (len(script.turns[-1].final) if script.turns else 0)
        + sum(len(r.text or "") for r in rounds)
        + sum(len(c.input) + _texts(c.result or ()) for c in script.calls())
    )


def last_message_chars(script: Script) -> int:
    """The text characters of the last request's last message: the results of the last turn's last
    round, or the last user message when that turn has no round."""
    if not script.turns:
        return 0
    last = script.turns[-1]
    if not last.rounds:
        return _texts(last.user)
    return sum(_texts(c.result or ()) for c in last.rounds[-1].calls)


@dataclass(slots=True)
class Guard:
    """A strategy's record over the samples: which were eligible, and on which it acted under
    which of its settings (by number)."""

    strategy: str
    eligible: list[str] = field(default_factory=list)
    acted: dict[str, int] = field(default_factory=dict)

    def note(self, transcript: str, setting: int, *, eligible: bool, acts: bool) -> None:
        if eligible:
            self.eligible.append(transcript)
        if acts:
            self.acted[transcript] = setting

    def check(self, *, at_least: int, settings: Sequence[int]) -> None:
        """The strategy acts on every eligible transcript, on `at_least` of them, and under each of
        the `settings` somewhere."""
        missed = [t for t in self.eligible if t not in self.acted]
        assert not missed, (self.strategy, "does not act on", missed)
        shown = [t for t in self.eligible if t in self.acted]
        assert len(shown) >= at_least, (self.strategy, "acts where eligible on", shown)
        unused = set(settings) - set(self.acted.values())
        assert not unused, (self.strategy, "never acts under", sorted(unused))
