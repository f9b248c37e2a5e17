"""The sliding-window preset: a protocol-blind baseline that drops the oldest messages."""
