"""The nonoka preset: microcompact, protocol-unit eviction with an evidence ledger, budget zones."""
