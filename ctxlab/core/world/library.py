"""A small built-in document library for the reader tool, generated deterministically.

Four Markdown documents a support or coding agent would consult: an API reference and a
changelog longer than the direct-read limit (so `resolve` lists their sections), an onboarding
guide and an incident runbook short enough to be read whole. Each holds facts a workload can ask
about (the token-refresh endpoint, the meaning of error 401, the on-call rota, ...), each in
exactly one section.

Invariants:
- `builtin_library()` is a pure function of nothing: the same documents, byte for byte, on every
  machine (text is built from fixed word lists by position, never from a random generator).
- `api-ref` and `changelog` are longer than `MAX_DIRECT_CHARS`; `onboarding` and `runbook` are not.
"""

from __future__ import annotations

import functools

from ctxlab.core.world.documents import Document

_WORDS = (
    "request",
    "client",
    "server",
    "token",
    "header",
    "payload",
    "field",
    "limit",
    "retry",
    "cache",
    "version",
    "account",
    "order",
    "region",
    "status",
    "timeout",
)


def filler(seed: int, sentences: int) -> str:
    """`sentences` plain sentences determined by `seed` (by position in a word list).

    >>> filler(0, 1)
    'The request sends the token to the field when the cache changes.'
    """
    out = []
    for k in range(sentences):
        w = [_WORDS[(seed * 7 + k * 5 + j * 3) % len(_WORDS)] for j in range(4)]
        out.append(f"The {w[0]} sends the {w[1]} to the {w[2]} when the {w[3]} changes.")
    return " ".join(out)


def _endpoint(n: int, resource: str, verb: str) -> str:
    body = filler(n, 16)
    return (
        f"### {verb.title()} {resource}\n\n`{verb.upper()} /v2/{resource}` ({n}).\n\n{body}\n\n"
        f"Parameters: `page`, `page_size` (at most {50 + n}), `filter`.\n"
    )


def _api_reference() -> str:
    parts = [
        "# API reference\n\nEvery endpoint of the service, version 2.\n",
        "## Authentication\n\nAccess tokens expire after 3600 seconds. Call `POST /auth/refresh` with "
        "the refresh token to get a new access token.\n\n" + filler(1, 6) + "\n",
    ]
    for r, resource in enumerate(("users", "orders", "invoices", "regions", "webhooks")):
        parts.append(f"## {resource.title()}\n\n{filler(10 + r, 4)}\n")
        parts.extend(
            _endpoint(10 * r + v, resource, verb) for v, verb in enumerate(("list", "create", "delete"))
        )
    parts.append(
        "## Error codes\n\n401 Unauthorized: the access token expired or is invalid; refresh it with "
        "`POST /auth/refresh` and retry once.\n\n403 Forbidden: the account lacks the scope.\n\n"
        "429 Too Many Requests: wait for the `Retry-After` header.\n\n" + filler(77, 8) + "\n"
    )
    parts.append("## Rate limits\n\nAt most 600 requests per minute per account.\n\n" + filler(88, 10) + "\n")
    return "\n".join(parts)


def _changelog() -> str:
    parts = ["# Changelog\n\nWhat changed in each release.\n"]
    for major in (1, 2, 3):
        parts.append(f"## Version {major}\n")
        for minor in range(8):
            fix = "the webhook retry storm" if (major, minor) == (2, 4) else f"issue {major}{minor:02d}"
            parts.append(f"### {major}.{minor}.0\n\nFixed {fix}.\n\n{filler(major * 10 + minor, 9)}\n")
    return "\n".join(parts)


def _onboarding() -> str:
    return (
        "# Onboarding guide\n\nRead this on your first day.\n\n## Accounts\n\nAsk the platform team "
        "for a staging account; production access needs a second approver.\n\n## Tools\n\n"
        + filler(5, 8)
        + "\n\n## Who to ask\n\nThe on-call engineer this week is listed in #oncall.\n"
    )


def _runbook() -> str:
    steps = "\n".join(f"{k}. {filler(40 + k, 3)}" for k in range(1, 9))
    return (
        "# Incident runbook\n\nWhat to do when an alert fires.\n\n## Triage\n\nPage the on-call "
        "engineer; the rota rotates every Monday at 09:00 UTC.\n\n"
        + filler(31, 10)
        + "\n\n## Mitigation\n\n"
        + steps
        + "\n\n## Database failover\n\nPromote the replica in the same region; the primary database "
        "listens on port 5432.\n\n" + filler(60, 12) + "\n\n## Postmortem\n\n" + filler(70, 10) + "\n"
    )


@functools.cache
def builtin_library() -> tuple[Document, ...]:
    """The built-in library: `api-ref`, `changelog`, `onboarding`, `runbook`."""
    return (
        Document(id="api-ref", text=_api_reference()),
        Document(id="changelog", text=_changelog()),
        Document(id="onboarding", text=_onboarding()),
        Document(id="runbook", text=_runbook()),
    )
