"""Building blocks the other families share, as pure functions.

Tool-result clearing and masking, summary cutoffs, free-text summary requests, protocol-unit
eviction with a ledger, microcompact, budget zones, and the no-progress breaker. Each family's
preset (`ctxlab.presets.<family>`) composes the ones its source uses.
"""
