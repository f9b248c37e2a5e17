"""How a parameter value reads in a figure's label or a table cell: one wording for both.

Kept apart from `ctxlab.analysis.plots` so that writing tables (the index) does not import
matplotlib.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np


def value_text(value: Any) -> str:
    """A parameter value as a label shows it.

    >>> value_text(0.8), value_text(100000), value_text(True), value_text("memory")
    ('0.8', '100,000', 'True', 'memory')
    """
    if isinstance(value, bool | np.bool_):
        return str(bool(value))
    if isinstance(value, numbers.Integral):
        return f"{int(value):,}"
    if isinstance(value, numbers.Real):
        return f"{float(value):g}"
    return str(value)
