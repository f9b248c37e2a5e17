"""The other families' pure algorithms, one concern per module.

Clearing old tool results (`clearing`, its verdicts kept from request to request by `plans`),
observation masking and elision (`observations`), large-result eviction (`large_results`), the
protocol-blind window (`window`), summary cutoffs (`cutoff`), free-text summary requests
(`freetext`), protocol-unit eviction with a ledger (`evict`), microcompact, budget zones
(`budget`) and the no-progress breaker (`progress`). Each family's preset
(`ctxlab.presets.<family>`) composes the ones its source uses.
"""
