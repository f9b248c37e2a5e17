"""The pydantic-ai family: pydantic-ai-harness compaction capabilities, exact to the installed package."""
