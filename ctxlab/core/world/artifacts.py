"""Artifact references of the Select / Write layers: the payload stays out of the context.

The idea is the Select layer's artifact references: a workflow's intermediate products
(requirements, raw data, chart data, a report) are kept as artifacts in a store, and the model is
handed a small reference (id, kind, schema, checksum, size, producer) instead of the payload, so it
neither fills its context with them nor rewrites them in passing; it fetches a payload only when it
needs to read one.

Invariants:
- `checksum` is the first 16 hex digits of the SHA-256 of the payload's UTF-8 bytes, and `size`
  its UTF-8 byte count: a reference identifies its payload exactly.
- `reference(artifact)` holds every field but the payload; its JSON text (`reference_text`) is
  what a tool returns in the payload's place.
- `fetch(artifacts, id)` returns the payload byte for byte, or None for an unknown id.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ctxlab.core.messages.blocks import utf8_len
from ctxlab.core.messages.tools import ToolSchema

FETCH_ARTIFACT = "fetch_artifact"


@dataclass(frozen=True, slots=True, kw_only=True)
class Artifact:
    """A stored product of a workflow step; `payload` is its content as text (JSON, CSV, ...)."""

    artifact_id: str
    task_id: str
    step_id: str
    kind: str
    media_type: str = "application/json"
    schema_id: str = ""
    payload: str
    producer: str = ""
    created_at: str = ""

    @property
    def checksum(self) -> str:
        """The first 16 hex digits of the payload's SHA-256.

        >>> Artifact(artifact_id="a", task_id="t", step_id="s", kind="k", payload="{}").checksum
        '44136fa355b3678a'
        """
        return hashlib.sha256(self.payload.encode("utf-8")).hexdigest()[:16]

    @property
    def size(self) -> int:
        """The payload's UTF-8 bytes."""
        return utf8_len(self.payload)


def reference(artifact: Artifact) -> dict[str, Any]:
    """Everything about `artifact` but its payload."""
    return {
        "artifact_id": artifact.artifact_id,
        "task_id": artifact.task_id,
        "step_id": artifact.step_id,
        "kind": artifact.kind,
        "media_type": artifact.media_type,
        "schema_id": artifact.schema_id,
        "checksum": artifact.checksum,
        "size": artifact.size,
        "producer": artifact.producer,
        "created_at": artifact.created_at,
    }


def reference_text(artifact: Artifact) -> str:
    """The reference as the JSON text a tool returns."""
    return json.dumps(reference(artifact), ensure_ascii=False)


def fetch(artifacts: Sequence[Artifact], artifact_id: str) -> str | None:
    """The payload of the artifact `artifact_id`, or None when there is none."""
    return next((a.payload for a in artifacts if a.artifact_id == artifact_id), None)


def fetch_schema() -> ToolSchema:
    """The `fetch_artifact` tool's schema (ctxlab's wording)."""
    return ToolSchema.of(
        FETCH_ARTIFACT,
        "Fetch the full content of an artifact by the `artifact_id` of its reference. Fetch only "
        "what you need to read: references already tell you the kind, size and checksum.",
        {"type": "object", "required": ["artifact_id"], "properties": {"artifact_id": {"type": "string"}}},
    )
