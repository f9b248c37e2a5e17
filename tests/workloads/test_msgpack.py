"""The strict MessagePack reader (`importers.msgpack`): every format of the spec at the edges of
its sizes, against hand-written bytes and against the `msgpack` and `ormsgpack` packers; cut,
unknown and too deeply nested input refused, saying where."""

from __future__ import annotations

import math
import re
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.workloads.importers.msgpack import DEPTH, Ext, Inner, MsgpackError, unpacked

msgpack = pytest.importorskip("msgpack")


@pytest.mark.parametrize(
    ("data", "value"),
    [
        (b"\xc0", None),
        (b"\xc2", False),
        (b"\xc3", True),
        (b"\x00", 0),
        (b"\x7f", 127),
        (b"\xe0", -32),
        (b"\xff", -1),
        (b"\xcc\xff", 255),
        (b"\xcd\xff\xff", 65535),
        (b"\xce\xff\xff\xff\xff", 2**32 - 1),
        (b"\xcf\xff\xff\xff\xff\xff\xff\xff\xff", 2**64 - 1),
        (b"\xd0\x80", -128),
        (b"\xd1\x80\x00", -(2**15)),
        (b"\xd2\x80\x00\x00\x00", -(2**31)),
        (b"\xd3\x80\x00\x00\x00\x00\x00\x00\x00", -(2**63)),
        (b"\xca" + struct.pack(">f", 1.5), 1.5),
        (b"\xcb" + struct.pack(">d", -0.1), -0.1),
        (b"\xa0", ""),
        (b"\xbf" + b"a" * 31, "a" * 31),
        (b"\xd9\x20" + b"a" * 32, "a" * 32),
        (b"\xda\x01\x00" + b"b" * 256, "b" * 256),
        (b"\xdb\x00\x01\x00\x00" + b"c" * 65536, "c" * 65536),
        (b"\xa2\xc3\xa9", "é"),
        (b"\xc4\x00", b""),
        (b"\xc4\x03abc", b"abc"),
        (b"\xc5\x01\x00" + b"\x01" * 256, b"\x01" * 256),
        (b"\xc6\x00\x01\x00\x00" + b"\x02" * 65536, b"\x02" * 65536),
        (b"\x90", []),
        (b"\x9f" + b"\x01" * 15, [1] * 15),
        (b"\xdc\x00\x10" + b"\x02" * 16, [2] * 16),
        (b"\xdd\x00\x01\x00\x00" + b"\xc0" * 65536, [None] * 65536),
        (b"\x80", {}),
        (b"\x81\xa1k\x01", {"k": 1}),
        (b"\xde\x00\x01\x01\x02", {1: 2}),
        (b"\xdf\x00\x00\x00\x01\xc0\xc3", {None: True}),
        (b"\x82\xa1k\x01\xa1k\x02", {"k": 2}),
        (b"\xd4\x01a", Ext(1, b"a")),
        (b"\xd5\x02ab", Ext(2, b"ab")),
        (b"\xd6\x03abcd", Ext(3, b"abcd")),
        (b"\xd7\xff" + b"t" * 8, Ext(-1, b"t" * 8)),
        (b"\xd8\x80" + b"s" * 16, Ext(-128, b"s" * 16)),
        (b"\xc7\x00\x05", Ext(5, b"")),
        (b"\xc7\x03\x05abc", Ext(5, b"abc")),
        (b"\xc8\x01\x00\x06" + b"x" * 256, Ext(6, b"x" * 256)),
        (b"\xc9\x00\x01\x00\x00\x07" + b"y" * 65536, Ext(7, b"y" * 65536)),
    ],
)
def test_every_format_reads_as_the_spec_says(data: bytes, value: object) -> None:
    assert unpacked(data) == value


def test_float32_keeps_its_single_precision_and_the_packers_agree() -> None:
    assert (
        unpacked(msgpack.packb(0.1, use_single_float=True)) == struct.unpack(">f", struct.pack(">f", 0.1))[0]
    )
    assert math.isnan(unpacked(b"\xcb" + struct.pack(">d", math.nan)))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("data", "told"),
    [
        (b"", "a value at byte 0 needs 1 bytes, 0 left"),
        (b"\xcd\x01", "a uint 16 at byte 1 needs 2 bytes, 1 left"),
        (b"\xa3ab", "a str at byte 1 needs 3 bytes, 2 left"),
        (b"\xd9", "the length of a str at byte 1"),
        (b"\xc6\x00\x00\x00\x05abc", "a bin at byte 5 needs 5 bytes"),
        (b"\x92\x01", "an array of 2 items at byte 1 needs 2 bytes, 1 left"),
        (b"\xdd\xff\xff\xff\xff\x01", "an array of 4294967295 items"),
        (b"\xdf\x00\x00\x00\x02\x01\x02\x03", "a map of 2 items"),
        (b"\xd6\x01ab", "an ext's data at byte 2 needs 4 bytes"),
        (b"\xc7\x02", "an ext's type at byte 2"),
        (b"\xc1", "byte 0 is 0xc1, which MessagePack never uses"),
        (b"\xc0\xc0", "1 bytes follow the value, from byte 1"),
        (b"\xa1\xff", "the str at byte 1 is not UTF-8"),
        (b"\x81\x90\x01", "the map key at byte 1 is a list"),
        (b"\x81\x80\x01", "the map key at byte 1 is a dict"),
    ],
)
def test_cut_unknown_and_malformed_input_is_refused_where_it_goes_wrong(data: bytes, told: str) -> None:
    with pytest.raises(MsgpackError, match=re.escape(told)):
        unpacked(data)


def test_every_cut_of_a_value_is_told_as_truncated() -> None:
    data = msgpack.packb({"a": [1, 2.5, "x" * 40, b"yz", {"n": None}], "b": msgpack.ExtType(3, b"abc")})
    for end in range(len(data)):
        with pytest.raises(MsgpackError, match="truncated"):
            unpacked(data[:end])


def test_nesting_is_bounded_for_arrays_maps_and_ext_data_alike() -> None:
    assert unpacked(b"\x91" * DEPTH + b"\xc0") is not None
    with pytest.raises(MsgpackError, match="nested too deeply"):
        unpacked(b"\x91" * (DEPTH + 1) + b"\xc0")
    with pytest.raises(MsgpackError, match="nested too deeply"):
        unpacked(b"\x81\xc0" * (DEPTH + 1) + b"\xc0")
    with pytest.raises(MsgpackError, match="nested too deeply"):
        unpacked(b"\x91" * 10**6)  # a bomb is refused at the limit, long before the stack runs out

    def opened(code: int, data: bytes, inner: Inner) -> object:
        return inner(data)

    bomb = b"\xc0"
    for _ in range(DEPTH + 1):
        bomb = msgpack.packb(msgpack.ExtType(1, bomb))
    with pytest.raises(
        MsgpackError, match=r"^in the ext at byte \d+: the ext at byte 1 is nested too deeply$"
    ):
        unpacked(bomb, opened)
    with pytest.raises(MsgpackError, match="in the ext at byte 1: 1 bytes follow its value"):
        unpacked(b"\xd5\x01\xc0\xc0", opened)


def test_a_hook_reads_each_ext_with_its_type() -> None:
    def hook(code: int, data: bytes, inner: Inner) -> object:
        return (code, inner(data))

    packed = msgpack.packb([msgpack.ExtType(5, msgpack.packb(["m", "C", {"k": 1}]))])
    assert unpacked(packed, hook) == [(5, ["m", "C", {"k": 1}])]


_KEYS = st.one_of(st.text(), st.integers(min_value=-(2**63), max_value=2**64 - 1))
_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**64 - 1),
    st.floats(allow_nan=False),
    st.text(),
    st.binary(),
)
_VALUES = st.recursive(
    _LEAVES,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(_KEYS, inner, max_size=5),
    max_leaves=30,
)


@given(_VALUES)
def test_what_msgpack_packs_reads_back_the_same(value: object) -> None:
    assert unpacked(msgpack.packb(value, use_bin_type=True)) == value


@given(_VALUES, st.integers(min_value=0, max_value=127), st.binary(max_size=70_000))
def test_what_ormsgpack_packs_reads_back_the_same_with_its_exts(
    value: object, code: int, data: bytes
) -> None:
    ormsgpack = pytest.importorskip("ormsgpack")
    packed = ormsgpack.packb([value, ormsgpack.Ext(code, data)], option=ormsgpack.OPT_NON_STR_KEYS)
    assert unpacked(packed) == [value, Ext(code, data)]
