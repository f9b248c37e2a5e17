"""The swe-agent preset: SWE-agent's last-N-observations history processor."""
