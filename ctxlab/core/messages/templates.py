"""Filling `{name}` placeholders in prompt and hint templates.

Invariants:
- Only the named placeholders are replaced; every other brace stays as it is, so templates may
  hold JSON or code.
- Filling is one pass over the template: a value that itself contains `{name}` is inserted as it
  is and never filled again, as with an f-string.
"""

from __future__ import annotations

import re


def fill(template: str, **values: object) -> str:
    """Replace `{name}` for each given name; other braces stay as they are.

    >>> fill("{a} and {b} and {c}", a=1, b="x")
    '1 and x and {c}'
    >>> fill("{a}{b}", a="{b}", b="!")
    '{b}!'
    """
    if not values:
        return template
    pattern = "|".join(re.escape(name) for name in values)
    return re.sub(r"\{(" + pattern + r")\}", lambda match: str(values[match.group(1)]), template)
