"""The LangChain presets: langchain-clear (clearing old tool results) and langchain-summary."""
