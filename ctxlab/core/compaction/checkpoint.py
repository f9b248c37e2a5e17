"""A summary checkpointed outside the window: the reference and preview the context keeps.

The Write/Isolate move for summaries: a summary that would stay in the window for many turns is
written to a workspace file instead, and the context keeps one reference line and a one-line
preview of it, so the agent reads the whole summary back only when it needs it:

    active_checkpoint: checkpoints/chk-0001.md
    preview: The user wants the login failure traced; password policy checked, network open.

Invariants:
- `CHECKPOINT_LINE` is the reference's format: `active_checkpoint: ` followed by the path and a
  line end, so a reader finds the path with `placeholder_values(CHECKPOINT_LINE, "path", text)`.
- `preview(text, limit)` is one line of at most `limit` characters: the summary's first
  non-blank line with runs of whitespace made one space, cut with `…` when longer; the same
  text always gives the same preview.
"""

from __future__ import annotations

from ctxlab.core.messages.templates import fill

CHECKPOINT_LINE = "active_checkpoint: {path}"
"""The reference to the checkpoint in force (a `fill` template; `{path}` ends it)."""

CHECKPOINT_REFERENCE = CHECKPOINT_LINE + "\npreview: {preview}"
"""What the context keeps of a checkpointed summary: the reference, then the preview."""

ELLIPSIS = "…"


def preview(text: str, limit: int) -> str:
    """The one-line preview of `text`, at most `limit` characters (`limit` ≥ 1).

    >>> preview("\\n  Goal:   trace the login failure.\\nDone: policy.", 80)
    'Goal: trace the login failure.'
    >>> preview("abcdef", 4)
    'abc…'
    """
    line = next((" ".join(raw.split()) for raw in text.splitlines() if raw.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + ELLIPSIS


def reference(template: str, path: str, text: str, limit: int) -> str:
    """`template` filled with the checkpoint's `path` and the `preview` of its `text`.

    >>> reference(CHECKPOINT_REFERENCE, "checkpoints/chk-0001.md", "Port 5432 is open.", 40)
    'active_checkpoint: checkpoints/chk-0001.md\\npreview: Port 5432 is open.'
    """
    return fill(template, path=path, preview=preview(text, limit))
