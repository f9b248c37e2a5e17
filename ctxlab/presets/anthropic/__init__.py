"""The anthropic-clear preset: Anthropic's context editing, clearing old tool uses."""
