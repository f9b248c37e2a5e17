"""Settings a scenario may write that no run reads: each loads with a located warning.

Invariants:
- A warning is told only for what the file itself writes or sweeps: `prices.input` away from
  its default with `cache_write` left at its own (a file giving both, as a provider's price
  table does, has its uncached input billed as it says), and a sub-agent's workspace only where
  it is not its parent's, and a policy agent's settings away from their defaults under a script
  agent, so the resolved settings ctxlab writes into a rerun's document load without one.
- Nothing is refused: these settings are legal, and ignoring them changes no result.
"""

from __future__ import annotations

from ctxlab.problems import Loc, Problem
from ctxlab.scenarios.located import Located
from ctxlab.scenarios.schema import AgentSpec, PricesSpec, Scenario

INPUT_PRICE = (
    "warning: prices.input bills no call: every run meters the prompt cache, so uncached input is "
    "billed at cache_write (it is written to the cache) and cached input at cached_read; set "
    "cache_write to the price of uncached input instead (an OpenAI model's input price)"
)
POLICY_ONLY = (
    "warning: not used: a script agent plays the workload as written; this setting is read by "
    "model.agent.kind: policy"
)
SUB_AGENT_WORKSPACE = (
    "warning: not used: sub-agents run in their parent's workspace, the parent entry's workspace; "
    "set it there"
)


def unused_settings(located: Located, scenario: Scenario) -> list[Problem]:
    """Every setting of the file no run reads, located, in file order of the checks."""
    return [located.locate(Problem(loc=loc, message=message)) for loc, message in _unused(located, scenario)]


def _unused(located: Located, scenario: Scenario) -> list[tuple[Loc, str]]:
    """`prices.input` away from its default (`cache_write` not given) or swept: every run
    meters the prompt cache, and `settle` bills uncached input at `cache_write`. A
    `delegate.strategy`'s own `workspace` other than a parent's: sub-agents share their parent's."""
    sweep, delegate = located.data.get("sweep"), located.data.get("delegate")
    found: list[tuple[Loc, str]] = []
    prices = located.data.get("prices")
    written = isinstance(prices, dict) and "cache_write" in prices
    if scenario.prices.input != PricesSpec().input and not written:
        found.append((("prices", "input"), INPUT_PRICE))
    if isinstance(sweep, dict) and "prices.input" in sweep:
        found.append((("sweep", "prices.input"), INPUT_PRICE))
    found.extend((("model", "agent", key), POLICY_ONLY) for key in _policy_settings(located, scenario))
    strategy = delegate.get("strategy") if isinstance(delegate, dict) else None
    if isinstance(strategy, dict) and "workspace" in strategy and _other_workspace(scenario):
        found.append((("delegate", "strategy", "workspace"), SUB_AGENT_WORKSPACE))
    return found


def _policy_settings(located: Located, scenario: Scenario) -> list[str]:
    """The policy agent's settings the file writes away from their defaults while its agent plays
    the script (a resolved document, which writes every default, warns of none)."""
    model = located.data.get("model")
    written = model.get("agent") if isinstance(model, dict) else None
    agent = scenario.model.agent
    if not isinstance(written, dict) or agent.kind != "script":
        return []
    default = AgentSpec()
    return [key for key in POLICY_FIELDS if key in written and getattr(agent, key) != getattr(default, key)]


POLICY_FIELDS = ("needs", "relist_after_compression", "max_rereads")
"""The agent settings only `kind: policy` reads."""


def _other_workspace(scenario: Scenario) -> bool:
    """Whether some sub-agent runs in a workspace other than its `delegate.strategy` names (one
    that names its parent's changes nothing, as a rerun's resolved document does)."""
    entry = scenario.delegate.strategy if scenario.delegate is not None else None
    return entry is not None and any(parent.workspace != entry.workspace for parent in scenario.strategies)
