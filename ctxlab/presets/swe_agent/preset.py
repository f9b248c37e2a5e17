"""The `swe-agent` preset: SWE-agent's `last_n_observations` history processor.

Source: SWE-agent (`SWE-agent/SWE-agent@3ea751c`, `sweagent/agent/history_processors.py`,
`LastNObservations` at l.85; `n=5` in the paper and its config). Before every query, every
observation but the last `n` is replaced by a one-line notice of how many lines it had; the first
observation (the task) is never elided. The history itself keeps every observation: the
processor edits the request only, so as the window moves each request differs from the previous
one inside the history, which its docstring notes breaks prompt caching (`polling` moves the
window in steps to break it less often).

Defaults: `n=5`, `polling=1`; the notice wording is ctxlab's own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ctxlab.core.compaction.observations import LastNObservationsParams, elide_observations
from ctxlab.core.messages.message import Message
from ctxlab.engine.env import Env
from ctxlab.engine.hooks import Frame
from ctxlab.engine.state import EpisodeState
from ctxlab.presets.preset import Preset
from ctxlab.presets.steps import Edit, Step, StepStrategy
from ctxlab.texts import Texts

SOURCE = "SWE-agent 3ea751c, sweagent/agent/history_processors.py (LastNObservations)"


@dataclass(frozen=True, slots=True)
class LastNObservations(Step):
    """Request-only: every tool result but the last `n` becomes a notice (event `cleared`)."""

    params: LastNObservationsParams
    key: ClassVar[str] = "last_n_observations"
    edits: ClassVar[bool] = True

    def edit(self, messages: tuple[Message, ...], state: EpisodeState, env: Env, frame: Frame) -> Edit:
        """The request with the older observations elided."""
        elided = elide_observations(messages, self.params)
        return Edit(messages=elided.messages, cleared=frozenset(elided.cleared))


def build(params: LastNObservationsParams, texts: Texts) -> StepStrategy:
    """The `swe-agent` strategy."""
    return StepStrategy(name="swe-agent", steps=(LastNObservations(params),), config=params, source=SOURCE)


PRESET = Preset(
    name="swe-agent",
    summary="SWE-agent last_n_observations: all but the last 5 tool results elided from each request",
    source=SOURCE,
    params=LastNObservationsParams,
    build=build,
)
