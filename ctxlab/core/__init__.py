"""The pure core: stdlib only, synchronous, frozen values.

Every algorithm takes what it needs as arguments and returns new values; nothing here reads a
clock, a file or a random source. Subpackages by concern: `messages` (the message model and
counting), `wire` (what a provider receives), `world` (the fake world of a workload),
`agentscope` (AgentScope's pipeline) and `compaction` (the building blocks of the other families).
"""
