"""Request files are compressed as their lines are made: the bytes of one gzip member of the
whole text, without the whole text ever held (a long run's lines add up to hundreds of MB)."""

from __future__ import annotations

import gzip
import json
import tracemalloc

from hypothesis import given
from hypothesis import strategies as st

from ctxlab.engine.trace import CallRecord
from ctxlab.experiments.execute import request_file
from ctxlab.experiments.gzipped import gzipped, gzipped_parts


@given(st.lists(st.binary(max_size=300), max_size=12), st.sampled_from([1, 6, 9]))
def test_parts_compressed_as_they_come_are_the_bytes_of_the_whole(parts: list[bytes], level: int) -> None:
    whole = b"".join(parts)
    packed = gzipped_parts(iter(parts), level)
    assert packed == gzipped(whole, level) and gzip.decompress(packed) == whole


def _record(index: int, messages: list[dict[str, str]]) -> CallRecord:
    return CallRecord(
        call_index=index,
        kind="reasoning",
        turn=0,
        iteration=index,
        tokens={"as_sent": 1},
        output_tokens=1,
        context_messages=len(messages),
        summary_chars=0,
        request={"messages": messages, "tools": []},
    )


def test_a_request_file_never_holds_its_whole_text() -> None:
    """Requests share their messages (a context is mostly the last one's), so 200 calls of one
    200 kB history are 40 MB of lines from a few hundred kB of objects: making the file holds
    a line at a time, not the 40 MB."""
    history = [{"role": "user", "content": f"{i:04d} " + "x" * 995} for i in range(200)]
    calls = tuple(_record(i, history) for i in range(200))
    tracemalloc.start()
    try:
        packed = request_file(calls)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    lines = gzip.decompress(packed).decode("utf-8").split("\n")
    assert lines.pop() == "" and len(lines) == 200
    assert json.loads(lines[-1]) == {"call_index": 199, "kind": "reasoning", "messages": history, "tools": []}
    assert sum(map(len, lines)) > 40_000_000 > 20 * peak
