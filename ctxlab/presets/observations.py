"""The observation window two families share: SWE-agent's `LastNObservations` as a step.

`swe-agent` is this step alone; `openhands-hybrid` (the Complexity Trap's masking and summary
hybrid) puts it after OpenHands' condenser. The algorithm is pure and lives in
`ctxlab.core.compaction.observations`; this module only makes it a request-only step, so neither
family imports the other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ctxlab.core.compaction.observations import LastNObservationsParams, elide_observations
from ctxlab.core.messages.message import Message
from ctxlab.engine.env import Env
from ctxlab.engine.hooks import Frame
from ctxlab.engine.state import EpisodeState
from ctxlab.presets.steps import Edit, Step


@dataclass(frozen=True, slots=True)
class LastNObservations(Step):
    """Request-only: every tool result but the last `n` becomes a notice (event `cleared`)."""

    params: LastNObservationsParams
    key: ClassVar[str] = "last_n_observations"
    edits: ClassVar[bool] = True

    def edit(self, messages: tuple[Message, ...], state: EpisodeState, env: Env, frame: Frame) -> Edit:
        """The request with the older observations elided."""
        elided = elide_observations(messages, self.params)
        return Edit(messages=elided.messages, cleared=elided.cleared)
