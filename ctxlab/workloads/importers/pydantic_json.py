"""JSON text as pydantic writes it (`pydantic_core.to_json`, a `TypeAdapter`'s `dump_json`): compact,
non-ASCII as is, and its own spelling of floats.

pydantic spells a float as Python's `repr` does but for two cases, checked against
`pydantic_core` 2.x on millions of doubles: an exponent of one digit is written without
Python's leading zero (`1e-9`, not `1e-09`), and a number of exponent -5 is written out
(`0.000025`, not `2.5e-05`). An infinity or NaN (which Python's `json` reads) is `null` where
pydantic-ai writes a value with its own adapter (a tool's return), and `Infinity` / `NaN`
where it calls `to_json` with its defaults (a call's arguments): `CONSTANTS`. The value is JSON
read by Python's `json`: dictionaries with string keys, lists, strings, numbers, booleans and
None, nested no deeper than the reader allows.
"""

from __future__ import annotations

import json
import math
from functools import partial

from ctxlab.workloads.importers.compact_json import compact_json, in_order


def pydantic_json(value: object, constants: bool = False) -> str:
    """`value` as pydantic's compact JSON text, infinities and NaN as `null`, or as JSON's
    extended constants when `constants` (module docstring); as deep as Python's `json` reads."""
    return compact_json(value, partial(_scalar, constants=constants), in_order)


def _scalar(item: object, constants: bool) -> str:
    if not isinstance(item, float):
        return json.dumps(item, ensure_ascii=False)
    if math.isfinite(item):
        return pydantic_float(item)
    return json.dumps(item) if constants else "null"


def pydantic_float(number: float) -> str:
    """A finite float as pydantic spells it (module docstring); `1e-05` is `0.00001`.

    >>> [pydantic_float(x) for x in (2.5e-05, -1e-07, 1e16, 0.1)]
    ['0.000025', '-1e-7', '1e+16', '0.1']
    """
    text = repr(number)
    if "e-0" not in text:
        return text
    mantissa, exponent = text.split("e")
    if int(exponent) != -5:
        return f"{mantissa}e{int(exponent)}"
    sign = "-" if mantissa.startswith("-") else ""
    return f"{sign}0.0000{mantissa.lstrip('-').replace('.', '')}"
