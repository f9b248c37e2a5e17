"""The deepagents preset: large tool results evicted to files, then a free-text summary."""
