"""Google ADK 2.13.0 events compaction (see `preset.py`)."""
