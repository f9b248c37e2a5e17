"""pydantic-ai's limit of requests a run (`UsageLimits.request_limit`, 50 by default in
pydantic-ai-slim 2.62.0, a preset's `request_limit`; none: no limit), with the summary requests
the harness folds into the run's usage.

A pydantic-ai run is one user turn of the lab (`agent.run` on the history and the new prompt).
Before each of its model requests, ahead of the capabilities' `before_model_request` hooks, the
run checks that fewer than the limit have been made (`check_before_request`); a request counts
once its answer is committed. `SummarizingCompaction` runs its summary agent on the run's own
usage with the limit less the request the run already approved (`reserved_usage_limits`), so each
summary request, a retried one too, needs the run's made requests and the approved one to stay
under the limit, and adds one to the run's count.

Kept in the state's memo under `REQUESTS_KEY`: the requests of the current turn, the approved
request included (a new turn starts from none, as each run starts from a fresh usage).

Invariants:
- `RequestLimit(limit)` runs first at every compression (once before every reasoning request)
  and raises `UsageLimitExceededError` when the run has made `limit` requests; otherwise it
  counts the request it approves.
- `summary_request(state, limit)` raises the same error when a summary request would be the
  run's `limit`-th counting the approved one; `summary_answered` counts one answered. A limit of
  None refuses nothing, and the requests are still counted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ctxlab.engine.env import Env
from ctxlab.engine.hooks import Frame
from ctxlab.engine.state import EpisodeState, memo, with_memo
from ctxlab.presets.pydantic_ai.params import REQUEST_LIMIT
from ctxlab.presets.steps import Step, Stepped

REQUESTS_KEY = "pydantic_ai_requests"


class UsageLimitExceededError(RuntimeError):
    """The run would make more requests than its limit (pydantic-ai's `UsageLimitExceeded`)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Requests:
    """The requests of the run of turn `turn`, the one approved included."""

    turn: int = -1
    made: int = 0


def requests_made(state: EpisodeState) -> int:
    """The requests of the current turn's run so far, the one approved included."""
    counted = memo(state, REQUESTS_KEY, Requests())
    return counted.made if counted.turn == state.turn else 0


def _counted(state: EpisodeState, made: int) -> EpisodeState:
    return with_memo(state, REQUESTS_KEY, Requests(turn=state.turn, made=made))


def _exceeded(what: str, limit: int) -> UsageLimitExceededError:
    return UsageLimitExceededError(
        f"the {what} would exceed pydantic-ai's request_limit of {limit} requests a run "
        "(summary requests included)"
    )


def summary_request(state: EpisodeState, limit: int | None) -> None:
    """Check a summary request against the run's limit, less the request already approved."""
    if limit is not None and requests_made(state) >= limit:
        raise _exceeded("summary request", limit)


def summary_answered(state: EpisodeState) -> EpisodeState:
    """The state counting one more answered summary request."""
    return _counted(state, requests_made(state) + 1)


@dataclass(frozen=True, slots=True)
class RequestLimit(Step):
    """The run's check before each model request, ahead of the capability (`limit` None: none)."""

    limit: int | None = REQUEST_LIMIT
    key: ClassVar[str] = "pydantic_ai_request_limit"

    def compress(self, state: EpisodeState, env: Env, frame: Frame) -> Stepped:
        """Refuse the request at the limit; count it otherwise."""
        made = requests_made(state)
        if self.limit is not None and made >= self.limit:
            raise _exceeded("next request", self.limit)
        return Stepped(state=_counted(state, made + 1))
