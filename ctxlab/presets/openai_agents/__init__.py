"""The OpenAI Agents SDK family: `ToolOutputTrimmer` and the session `limit` (openai-agents 0.24.0)."""
