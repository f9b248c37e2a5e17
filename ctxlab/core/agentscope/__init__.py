"""AgentScope 2.0.11's context pipeline as pure functions.

Compression and its split points, the structured summary, tool-result truncation, the image cap,
runtime-state injection and the task tools. The `agentscope` preset (`ctxlab.presets.agentscope`)
runs them at the engine's hooks.
"""
