"""Parity helpers import agentscope at module level; without it only their tests' skips remain."""

from __future__ import annotations

import importlib.util

collect_ignore = [] if importlib.util.find_spec("agentscope") else ["driver.py", "fakes.py"]
