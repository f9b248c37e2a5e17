"""The only "LLMs" of the lab: deterministic fakes behind the `ChatModel` protocol."""
