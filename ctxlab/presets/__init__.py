"""Every preset, one package per family, listed in `ctxlab.presets.registry`.

A family package holds its parameters with the source's defaults, its steps at the engine's
hooks, the source it follows, and its scenario entry. Families never import each other; what
several share is in `ctxlab.core.compaction` and `ctxlab.presets.steps`.
"""
