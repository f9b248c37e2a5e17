"""The agentscope preset: AgentScope 2.0.11's configs, steps, built-in tools and scenario entry."""
