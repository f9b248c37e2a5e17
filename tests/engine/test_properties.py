"""Properties of whole runs of the agentscope preset on generated workloads and configurations."""

from __future__ import annotations

import json
import re

from hypothesis import given

from ctxlab.core.agentscope.summary import summary_text
from ctxlab.core.messages.blocks import TextBlock, ToolResultBlock
from ctxlab.core.messages.codec import decode_messages, decode_part
from ctxlab.core.messages.tokens import AgentScopeEstimator, bytes_to_tokens
from ctxlab.core.world.script import Script
from ctxlab.engine.env import Env
from ctxlab.engine.hooks import RunSettings
from ctxlab.engine.loop import Loop, RunOutcome
from ctxlab.engine.workspace import InMemoryWorkspace
from ctxlab.models.scripted import ScriptModel
from ctxlab.models.summarizers import FixedSummarizer
from ctxlab.presets.agentscope.compression import SummaryFailedError
from ctxlab.presets.agentscope.strategy import AgentScopeStrategy
from ctxlab.texts import CTXLAB_TEXTS
from tests.parity.lab import params_of
from tests.parity.spec import ParityConfig
from tests.parity.workloads import parity_cases
from tests.zoo.runs import strategy_caused

EST = AgentScopeEstimator()


def run_case(script: Script, config: ParityConfig) -> tuple[RunOutcome | None, Env]:
    workspace = InMemoryWorkspace()
    summarizer = FixedSummarizer(
        fields=dict(config.summary_fields), fail_on=config.fail_on, fail_mode=config.fail_mode
    )
    env = Env(
        counter=EST,
        model=ScriptModel(script),
        summarizer=summarizer,
        texts=CTXLAB_TEXTS,
        context_size=config.context_size,
        workspace=workspace,
    )
    settings_ = RunSettings(
        max_iters=config.max_iters,
        max_iters_hint=CTXLAB_TEXTS.max_iters_hint,
        max_iters_source=CTXLAB_TEXTS.max_iters_source,
    )
    loop = Loop(
        script=script,
        strategy=AgentScopeStrategy(texts=CTXLAB_TEXTS, params=params_of(config)),
        env=env,
        settings=settings_,
    )
    try:
        return loop.run(), env
    except SummaryFailedError:  # without the truncation fallback a failed summary ends the run
        return None, env


@given(parity_cases())
def test_no_request_breaks_the_openai_or_anthropic_rules(case: tuple[Script, ParityConfig]) -> None:
    _, env = run_case(*case)
    assert env.recorder.calls
    assert strategy_caused([v for c in env.recorder.calls for v in c.violations], "agentscope") == []


PATH = re.compile(r"'(offload/tool-result-\d{4}\.(txt|json))'")


@given(parity_cases())
def test_every_offloaded_byte_reads_back(case: tuple[Script, ParityConfig]) -> None:
    script, config = case
    outcome, env = run_case(script, config)
    workspace = env.workspace
    assert isinstance(workspace, InMemoryWorkspace)
    for path in workspace.files:
        if path.startswith("offload/context-"):
            assert decode_messages(json.loads(workspace.read(path)))  # a whole, decodable span
    if outcome is None:
        return
    originals = {
        c.id: "".join(p.text for p in c.result or () if isinstance(p, TextBlock)) for c in script.calls()
    }
    for message in outcome.state.context:
        for block in message.blocks:
            if not isinstance(block, ToolResultBlock) or "<<<TRUNCATED>>>" not in block.text:
                continue
            kept, reminder = block.text.split("\n<<<TRUNCATED>>>", 1)
            found = PATH.search(reminder)
            assert found is not None
            payload = workspace.read(found.group(1)).decode("utf-8")
            if found.group(2) == "json":
                payload = "".join(
                    p.text for p in map(decode_part, json.loads(payload)) if isinstance(p, TextBlock)
                )
            assert kept + payload == originals[block.id]


@given(parity_cases())
def test_after_a_successful_compression_the_request_is_under_the_trigger_when_the_summary_fits(
    case: tuple[Script, ParityConfig],
) -> None:
    script, config = case
    _, env = run_case(script, config)
    c = config.context
    calls = env.recorder.calls
    for record in env.recorder.compressions:
        nxt = next((x for x in calls[record.before_call :] if x.kind == "reasoning"), None)
        if not record.summary_ok or nxt is None or nxt.turn != calls[record.before_call - 1].turn:
            continue
        added = bytes_to_tokens(len(summary_text(record.summary).encode())) + 200  # + hints at most
        if added <= (c.trigger_ratio - c.reserve_ratio) * config.context_size - 1:
            assert nxt.tokens["as_sent"] < c.trigger_ratio * config.context_size
