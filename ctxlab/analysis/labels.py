"""How a parameter value reads in a figure's label or a table cell: one wording for both.

Kept apart from `ctxlab.analysis.plots` so that writing tables (the index) does not import
matplotlib, nor numpy: a numpy value can only reach here once numpy is imported.
"""

from __future__ import annotations

import numbers
import sys
from typing import Any


def value_text(value: Any) -> str:
    """A parameter value as a label shows it.

    >>> value_text(0.8), value_text(100000), value_text(True), value_text("memory")
    ('0.8', '100,000', 'True', 'memory')
    """
    if _is_bool(value):
        return str(bool(value))
    if isinstance(value, numbers.Integral):
        return f"{int(value):,}"
    if isinstance(value, numbers.Real):
        return f"{float(value):g}"
    return str(value)


def _is_bool(value: Any) -> bool:
    numpy = sys.modules.get("numpy")
    return isinstance(value, bool) or (numpy is not None and isinstance(value, numpy.bool_))
