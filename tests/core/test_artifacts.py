"""Artifact references: the payload stays out, the reference identifies it exactly."""

from __future__ import annotations

import hashlib
import json

from hypothesis import given
from hypothesis import strategies as st

from ctxlab.core.world.artifacts import Artifact, fetch, fetch_schema, reference, reference_text


def artifact(payload: str, artifact_id: str = "art-1") -> Artifact:
    return Artifact(
        artifact_id=artifact_id, task_id="t", step_id="collect_data", kind="raw_data", payload=payload
    )


def test_the_reference_has_everything_but_the_payload() -> None:
    made = artifact('{"rows": [1, 2]}')
    ref = reference(made)
    assert "payload" not in ref and ref["artifact_id"] == "art-1" and ref["kind"] == "raw_data"
    assert ref["size"] == len('{"rows": [1, 2]}') and len(ref["checksum"]) == 16
    assert json.loads(reference_text(made)) == ref


@given(st.text())
def test_checksum_and_size_identify_the_payload_bytes(payload: str) -> None:
    made = artifact(payload)
    data = payload.encode("utf-8")
    assert made.size == len(data)
    assert made.checksum == hashlib.sha256(data).hexdigest()[:16]
    assert fetch([artifact("other", "art-0"), made], "art-1") == payload


def test_fetching_an_unknown_id_gives_none() -> None:
    assert fetch([artifact("x")], "art-9") is None
    assert fetch_schema().name == "fetch_artifact"
