"""The none preset: no context management, the baseline."""
