"""Flagging compactions that cannot make progress: the `loop_warning` event and run warnings.

A compaction is judged by `ctxlab.core.compaction.progress.assess_compaction`: futile when it reclaims under
1% of the request, and hopeless by design when its floor (system prompt, tools, summary, the tail
it must keep) is at or above the trigger, so the next check fires again (as users report in
NousResearch/hermes-agent #53008, MoonshotAI/kimi-code PR #2498, pipecat PR #5505 and
OpenHands/OpenHands #8630).

Invariants:
- A flagged compaction adds one `loop_warning` event to the next call and one line to
  `Recorder.warnings` that names the call, the strategy and the reason with its numbers.
- Flagging never changes the state: stopping repeated futile compaction is the strategy's choice
  (the zoo presets stop after `FUTILE_COMPACTION_LIMIT`; the `agentscope` preset only flags, as
  AgentScope itself re-compresses).
"""

from __future__ import annotations

from ctxlab.core.compaction.progress import CompactionProgress
from ctxlab.core.events import EventKind
from ctxlab.engine.env import Env


def progress_warning(progress: CompactionProgress, who: str, call_index: int) -> str:
    """The warning line for a flagged compaction.

    >>> from ctxlab.core.compaction.progress import assess_compaction
    >>> p = assess_compaction(before=10_000, after=9_990, floor=9_000, trigger=8_000)
    >>> for line in progress_warning(p, "nonoka", 7).replace(", so", ";").split("; "): print(line)
    call 7: nonoka compaction reclaimed 10 of 10000 tokens (0.1%), under the minimum
    its floor of 9000 tokens (system prompt, tools, summary, kept tail) is at or above the trigger 8000
    the next check fires again
    """
    reasons = []
    if progress.futile:
        share = 100 * progress.reclaimed / progress.before if progress.before else 0.0
        reasons.append(
            f"reclaimed {progress.reclaimed} of {progress.before} tokens ({share:.1f}%), under the minimum"
        )
    if progress.floor_at_trigger:
        reasons.append(
            f"its floor of {progress.floor} tokens (system prompt, tools, summary, kept tail) is at or "
            f"above the trigger {progress.trigger}, so the next check fires again"
        )
    return f"call {call_index}: {who} compaction " + "; ".join(reasons)


def flag_progress(env: Env, progress: CompactionProgress, who: str) -> bool:
    """Record a `loop_warning` and a warning when `progress` is flagged; True when it is."""
    if not progress.flagged:
        return False
    env.recorder.event(EventKind.LOOP_WARNING)
    env.recorder.warnings.append(progress_warning(progress, who, env.recorder.next_call_index))
    return True
