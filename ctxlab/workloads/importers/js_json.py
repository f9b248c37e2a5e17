"""JSON text as JavaScript's `JSON.stringify` writes it, for the importers of transcripts that
TypeScript tools write and send (the AI SDK, OpenCode): compact, non-ASCII as is, and
JavaScript's own spelling of what Python's `json` spells otherwise.

The invariant, checked against Node 20 (tests/data/js-json): for JSON text `t` that
Python's `json` reads to `v`, `js_json(v)` is `JSON.stringify(JSON.parse(t))`. So:
- A number is spelt as ECMAScript's `Number::toString` spells the double JSON.parse reads
  (`js_number`): `1.0` is `1`, `-0` is `0`, `1e-07` is `1e-7`, `1e+20` is `100000000000000000000`,
  and an integer past 2**53 in magnitude is the double nearest it (`12345678901234567890` is
  `12345678901234567000`). A number past the doubles' range (`1e400`, which JSON.parse reads as
  an infinity) is `null`, and so are the infinities and NaN Python's `json` reads besides JSON.
- A string escapes `"`, `\\`, control characters (`\\b\\f\\n\\r\\t`, else `\\u00xx` in lowercase
  hex) and a lone surrogate (`\\udxxx`, as JSON.stringify does since ES2019); U+2028, U+2029 and
  DEL are written as they are. Python's surrogate code points are read as JavaScript's UTF-16
  units: a high one before a low one is the character of the pair.
- An object's members whose keys are array indices (`0` to 2**32 - 2, written canonically) come
  first, in ascending order, then the others in their order, as a JavaScript object holds them.

The value is JSON read by Python's `json` (`ctxlab.workloads.importers.compact_json`).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping

from ctxlab.workloads.importers.compact_json import compact_json

SAFE = 2**53
"""Up to this magnitude every integer is a double exactly."""
_INDEX = re.compile(r"0|[1-9][0-9]{0,9}")
_LAST_INDEX = 2**32 - 2
_SURROGATE = re.compile("[\ud800-\udfff]")
_STRING = json.JSONEncoder(ensure_ascii=False).encode


def js_json(value: object) -> str:
    """`value` as `JSON.stringify` writes it (module docstring); as deep as Python's `json` reads.

    >>> js_json({"b": [1.0, -0.0, 1e-07, 12345678901234567890], "1": "\\x1f\\u2028"})
    '{"1":"\\\\u001f\\u2028","b":[1,0,1e-7,12345678901234567000]}'
    """
    return compact_json(value, _scalar, js_members)


def _scalar(item: object) -> str:
    if isinstance(item, str):
        return js_string(item)
    if isinstance(item, int | float) and not isinstance(item, bool):
        return js_number(item)
    return json.dumps(item)  # true, false, null; any other type is refused


def js_number(number: int | float) -> str:
    """A number as `JSON.stringify` spells the double nearest it: ECMAScript's `Number::toString`
    of a finite one, `null` otherwise.

    >>> [js_number(x) for x in (1.0, -0.0, 1e-07, 1e20, 1e21, 1.5e-6, 2**53 + 1, 1e400)]
    ['1', '0', '1e-7', '100000000000000000000', '1e+21', '0.0000015', '9007199254740992', 'null']
    """
    if isinstance(number, int) and -SAFE <= number <= SAFE:
        return str(number)
    try:
        double = float(number)  # the nearest double, as JSON.parse reads a long integer
    except OverflowError:
        return "null"
    if not math.isfinite(double):
        return "null"
    if double == 0:
        return "0"
    return "-" + _positive(-double) if double < 0 else _positive(double)


def _positive(number: float) -> str:
    """A positive finite double as `Number::toString` spells it: its shortest round-trip digits
    (Python's `repr` finds the same) placed by their decimal exponent."""
    digits, point = _digits(number)
    if len(digits) <= point <= 21:
        return digits + "0" * (point - len(digits))
    if 0 < point <= 21:
        return f"{digits[:point]}.{digits[point:]}"
    if -6 < point <= 0:
        return "0." + "0" * -point + digits
    fraction = f".{digits[1:]}" if len(digits) > 1 else ""
    return f"{digits[0]}{fraction}e{'+' if point > 0 else '-'}{abs(point - 1)}"


def _digits(number: float) -> tuple[str, int]:
    """The shortest digits `s` (no leading or trailing zero) of a positive double and the
    exponent `n` the spec names, the double being `0.s × 10**n`.

    >>> _digits(0.00123), _digits(1e-07), _digits(1200.0), _digits(1.5e300)
    (('123', -2), ('1', -6), ('12', 4), ('15', 301))
    """
    mantissa, _, exponent = repr(number).partition("e")
    whole, _, fraction = mantissa.partition(".")
    written = whole + fraction
    significant = written.lstrip("0")
    point = int(exponent or 0) + len(whole) - (len(written) - len(significant))
    return significant.rstrip("0"), point


def js_string(text: str) -> str:
    """A string as `JSON.stringify` spells it: Python's escapes but for lone surrogates, which
    JavaScript escapes and Python writes as they are.

    >>> js_string("\\ud83d\\ude00 \\ud800")
    '"😀 \\\\ud800"'
    """
    if not _SURROGATE.search(text):
        return _STRING(text)
    units = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    return _SURROGATE.sub(lambda lone: f"\\u{ord(lone.group()):04x}", _STRING(units))


def js_members(mapping: Mapping[str, object]) -> Iterable[tuple[str, object]]:
    """An object's members in the order a JavaScript object holds them: array-index keys first,
    ascending, then the others in the mapping's order."""
    indexed = sorted((int(key), key) for key in mapping if _is_index(key))
    if not indexed:
        return mapping.items()
    first = [(key, mapping[key]) for _, key in indexed]
    return first + [(key, value) for key, value in mapping.items() if not _is_index(key)]


def _is_index(key: object) -> bool:
    """Whether `key` is an array index as JavaScript writes one: `0` to 2**32 - 2, no leading zero."""
    return isinstance(key, str) and _INDEX.fullmatch(key) is not None and int(key) <= _LAST_INDEX
