"""Engine steps over content that leaves the context: tool-result truncation, the image cap.

Both are pure core plans (`ctxlab.core.agentscope.toolresult`, `ctxlab.core.agentscope.images`)
with the workspace writes in between, done here so the core never does I/O.

Invariants: only the cut-off part of a result is stored; an image with its own URL is never
stored; without a workspace nothing is stored and the notices say so.
"""

from __future__ import annotations

from ctxlab.core.agentscope.images import apply_image_cap, plan_image_cap
from ctxlab.core.agentscope.toolresult import attach_reminder, split_tool_result, truncation_reminder
from ctxlab.core.events import EventKind
from ctxlab.core.messages.blocks import ToolResultBlock
from ctxlab.engine.env import Env
from ctxlab.engine.state import EpisodeState, memo, with_context, with_memo
from ctxlab.texts import Texts


def truncate_result(result: ToolResultBlock, limit: int, env: Env, texts: Texts) -> ToolResultBlock:
    """The result cut at `limit` tokens with its reminder, the cut-off part offloaded."""
    split = split_tool_result(result, limit, env.counter)
    if split is None:
        return result
    env.recorder.event(EventKind.TRUNCATED)
    path = None
    if env.workspace is not None:
        path = env.workspace.offload_tool_result(split.offloaded)
        env.recorder.event(EventKind.OFFLOADED)
    return attach_reminder(split.kept, truncation_reminder(texts, path))


def cap_images(state: EpisodeState, max_images: int, env: Env, texts: Texts) -> EpisodeState:
    """The state with only the newest `max_images` images; older ones become notices."""
    if state.context_tally.ndata <= max(max_images, 0):
        return state  # images are data blocks: no more of them than the tally counts
    cap = plan_image_cap(state.context, max_images)
    if not cap.removed:
        return state
    urls: list[str | None] = []
    for site in cap.removed:
        if site.own_url is not None:
            urls.append(site.own_url)
        elif env.workspace is not None:
            urls.append(env.workspace.offload_data(site.image))
            env.recorder.event(EventKind.OFFLOADED)
        else:
            urls.append(None)
    env.recorder.event(EventKind.IMAGES_REMOVED)
    capped = with_context(state, apply_image_cap(state.context, cap, urls, texts), env.counter)
    return with_memo(capped, IMAGES_REPLACED, True)


IMAGES_REPLACED = "agentscope.images_replaced"
"""The state's memo set once an image became a notice: a result may then hold several parts and
no data, which the OpenAI chat formatter joins (`core.agentscope.formatter`)."""


def may_need_form(state: EpisodeState) -> bool:
    """Whether a result of the context may be sent otherwise than stored: it holds data (the
    context's tally counts it), or an image of it became a notice. False for nearly every
    context, at no cost."""
    return state.context_tally.ndata > 0 or memo(state, IMAGES_REPLACED, False)
