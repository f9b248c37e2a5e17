"""Retention probes and where each one is still recoverable.

A probe is a planted fact (`db-port: 5432`), rule (a user constraint, in its own words) or
artifact (a path, an error string, an id). After a compression the lab looks for every probe
the workload has delivered so far in four places: the visible context (system prompt, messages,
hints, tool calls and results), the summary, the ledger a strategy keeps beside the context, and
the offloaded files (each with the tokens reading it back would cost).

Invariants:
- Matching is literal: a probe is found in a text when its planted line occurs in it; a rule or
  an artifact also when its value does, and a fact when its key and its value both do (a bare
  value like `5432` is too weak a trace on its own). Each needle also matches in its JSON-escaped
  form, so offloaded JSON files are searched without decoding them.
- A probe is *retained* when it is in the context, the summary or the ledger: the model has it
  without doing anything. It is *offload-only* when only an offloaded file holds it (a re-read
  brings it back, at that file's cost), and *lost* otherwise.
- Scores count delivered probes only; probes the workload has not delivered yet are listed as
  pending and count nowhere.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, assert_never

ProbeKind = Literal["fact", "rule", "artifact"]
Place = Literal["context", "summary", "ledger"]
Status = Literal["context", "summary", "ledger", "offload", "lost"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Probe:
    """A planted fact (`db-port: 5432`), rule (a user constraint) or artifact (a path, error, id)."""

    kind: ProbeKind
    key: str
    value: str
    where: str

    @property
    def text(self) -> str:
        """The line planted into the script: `key: value`, or the rule's own words.

        >>> Probe(kind="fact", key="db-port", value="5432", where="turn 0").text
        'db-port: 5432'
        >>> Probe(kind="rule", key="no-coauthor", value="Never add Co-Authored-By.", where="turn 0").text
        'Never add Co-Authored-By.'
        """
        return self.value if self.kind == "rule" else f"{self.key}: {self.value}"


def _variants(needle: str) -> tuple[str, ...]:
    escaped = json.dumps(needle, ensure_ascii=False)[1:-1]
    return (needle,) if escaped == needle else (needle, escaped)


def _occurs(needle: str, text: str) -> bool:
    return bool(needle) and any(v in text for v in _variants(needle))


def probe_found(probe: Probe, text: str) -> bool:
    """Whether `text` holds the probe (see the module docstring for the rule).

    >>> fact = Probe(kind="fact", key="db-port", value="5432", where="turn 0")
    >>> probe_found(fact, "db-port: 5432"), probe_found(fact, "port 5432"), probe_found(fact, "db-port=5432")
    (True, False, True)
    >>> probe_found(Probe(kind="artifact", key="log", value="a/b.log", where="turn 0"), '{"p": "a/b.log"}')
    True
    """
    if _occurs(probe.text, text):
        return True
    match probe.kind:
        case "rule" | "artifact":
            return _occurs(probe.value, text)
        case "fact":
            return _occurs(probe.key, text) and _occurs(probe.value, text)
        case _:
            assert_never(probe.kind)


@dataclass(frozen=True, slots=True, kw_only=True)
class OffloadText:
    """One offloaded file as text, and the tokens a tool result holding it would cost."""

    path: str
    text: str
    reread_tokens: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Sources:
    """Everywhere a probe may still be: the visible context, the summary, the ledger, the files."""

    context: str
    summary: str = ""
    ledger: str = ""
    offloads: tuple[OffloadText, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class ProbeState:
    """Where one probe is recoverable at one moment.

    `places` lists where it is visible without a re-read (in the order context, summary, ledger);
    `offloads` the files holding it; `reread_tokens` the cheapest of those files (None: no file).
    """

    key: str
    kind: ProbeKind
    places: tuple[Place, ...] = ()
    offloads: tuple[str, ...] = ()
    reread_tokens: int | None = None

    @property
    def status(self) -> Status:
        """The cheapest way back: a visible place, else `offload`, else `lost`.

        >>> ProbeState(key="k", kind="fact", offloads=("f",), reread_tokens=9).status
        'offload'
        """
        if self.places:
            return self.places[0]
        return "offload" if self.offloads else "lost"


def locate(probe: Probe, sources: Sources) -> ProbeState:
    """Where `probe` is recoverable in `sources`."""
    visible: tuple[tuple[Place, str], ...] = (
        ("context", sources.context),
        ("summary", sources.summary),
        ("ledger", sources.ledger),
    )
    places = tuple(name for name, text in visible if probe_found(probe, text))
    holders = [f for f in sources.offloads if probe_found(probe, f.text)]
    cheapest = min((f.reread_tokens for f in holders), default=None)
    return ProbeState(
        key=probe.key,
        kind=probe.kind,
        places=places,
        offloads=tuple(f.path for f in holders),
        reread_tokens=cheapest,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class KindScore:
    """Retention of the delivered probes of one kind.

    `retained`: visible without a re-read; `offload_only`: recoverable only by reading a file
    back, at `reread_tokens` in all (the cheapest file of each); `lost`: nowhere.
    """

    probes: int = 0
    retained: int = 0
    offload_only: int = 0
    lost: int = 0
    reread_tokens: int = 0

    @property
    def retention(self) -> float | None:
        """Share retained without a re-read (None when there is no probe of this kind).

        >>> KindScore(probes=4, retained=1, offload_only=2, lost=1).retention
        0.25
        """
        return self.retained / self.probes if self.probes else None

    @property
    def offload_share(self) -> float | None:
        """Share recoverable only from an offloaded file (None when there is no probe)."""
        return self.offload_only / self.probes if self.probes else None


@dataclass(frozen=True, slots=True, kw_only=True)
class RetentionScores:
    """Scores per probe kind."""

    facts: KindScore
    rules: KindScore
    artifacts: KindScore


def score_kind(states: Sequence[ProbeState], kind: ProbeKind) -> KindScore:
    """The score of the probes of one kind."""
    mine = [s for s in states if s.kind == kind]
    offload = [s for s in mine if s.status == "offload"]
    return KindScore(
        probes=len(mine),
        retained=sum(1 for s in mine if s.places),
        offload_only=len(offload),
        lost=sum(1 for s in mine if s.status == "lost"),
        reread_tokens=sum(s.reread_tokens or 0 for s in offload),
    )


def score(states: Sequence[ProbeState]) -> RetentionScores:
    """Scores per kind of the given probe states."""
    return RetentionScores(
        facts=score_kind(states, "fact"),
        rules=score_kind(states, "rule"),
        artifacts=score_kind(states, "artifact"),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class RetentionSnapshot:
    """Where every delivered probe is, at one moment of a run.

    `before_call` is the index of the model call the snapshot precedes (after the last call for
    the final snapshot); `compressions` counts the compressions recorded so far; `final` marks
    the snapshot taken at the end of the run; `pending` holds the keys not delivered yet.
    """

    before_call: int
    compressions: int
    final: bool = False
    probes: tuple[ProbeState, ...] = ()
    pending: tuple[str, ...] = ()

    @property
    def scores(self) -> RetentionScores:
        """Scores per kind."""
        return score(self.probes)

    def state_of(self, key: str) -> ProbeState:
        """The state of the delivered probe `key`.

        Raises:
            KeyError: no delivered probe has that key.
        """
        for state in self.probes:
            if state.key == key:
                return state
        raise KeyError(f"probe {key!r} is not delivered at call {self.before_call} (pending: {self.pending})")


def take_snapshot(
    probes: Sequence[Probe],
    delivered: frozenset[str],
    sources: Sources,
    *,
    before_call: int,
    compressions: int,
    final: bool = False,
) -> RetentionSnapshot:
    """Locate every delivered probe in `sources`; the others are pending."""
    return RetentionSnapshot(
        before_call=before_call,
        compressions=compressions,
        final=final,
        probes=tuple(locate(p, sources) for p in probes if p.key in delivered),
        pending=tuple(p.key for p in probes if p.key not in delivered),
    )
