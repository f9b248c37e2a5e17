"""The message model: content blocks, messages, tool schemas, token counting, view units,
requests and responses, and their exact JSON codec."""
