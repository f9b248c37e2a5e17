"""Every zoo preset: its source's defaults, its description, and one it can be built from."""

from __future__ import annotations

import dataclasses
import re

import pytest

from ctxlab.core.compaction.cutoff import ContextSize
from ctxlab.presets.registry import PRESETS, preset
from ctxlab.presets.steps import StepStrategy
from ctxlab.texts import CTXLAB_TEXTS

DEFAULTS = {
    "nonoka": {
        "budget": {"max_tokens": 8192, "reserve_output_tokens": 4096, "compaction_buffer_tokens": 2048},
        "evict.max_bytes": 12 * 1024,
        "evict.preview_chars": 800,
        "evict.preview_side": 360,
        "microcompact.command_chars": 200,
        "summarize": False,
        "summary_failure_limit": 3,
        "trim.keep_last": 2,
    },
    "anthropic-clear": {
        "trigger": 100_000,
        "keep": 3,
        "clear_at_least": None,
        "exclude_tools": (),
        "clear_tool_inputs": False,
        "persist": False,
    },
    "langchain-clear": {
        "trigger": 100_000,
        "clear_at_least": 0,
        "keep": 3,
        "clear_tool_inputs": False,
        "exclude_tools": (),
        "placeholder": None,
        "persist": False,
    },
    "langchain-summary": {
        "keep": ContextSize("messages", 20),
        "trigger": None,
        "trim_tokens_to_summarize": 4000,
        "anthropic": False,
    },
    "deepagents": {
        "filesystem.tool_token_limit_before_evict": 20_000,
        "filesystem.human_message_token_limit_before_evict": 50_000,
        "summarization.trigger.kind": "fraction",
        "summarization.trigger.value": 0.85,
        "summarization.keep.value": 0.10,
        "summarization.trim_tokens_to_summarize": None,
        "summarization.truncate_args_settings.max_length": 2000,
    },
    "openhands": {"condenser.size": 80, "condenser.first": 4, "max_iterations": 500},
    "openhands-hybrid": {"masking.n": 10, "condenser.size": 80},
    "swe-agent": {"polling": 1},
    "strands-sliding-window": {"window_size": 40, "should_truncate_results": True, "per_turn": False},
    "strands-summarizing": {
        "summary_ratio": 0.3,
        "preserve_recent_messages": 10,
        "summarization_system_prompt": None,
    },
    "openai-agents-trimmer": {
        "recent_turns": 2,
        "max_output_chars": 500,
        "preview_chars": 200,
        "trimmable_tools": None,
        "session_settings.limit": None,
    },
    "openai-agents-session": {"session_settings.limit": None},
    "pydantic-ai-clear": {
        "max_messages": None,
        "max_tokens": None,
        "max_fraction": None,
        "keep_pairs": 3,
        "placeholder": None,
        "exclude_tools": (),
        "clear_tool_inputs": False,
        "min_clear_tokens": None,
    },
    "pydantic-ai-window": {"keep_messages": 40, "keep_tokens": None, "preserve_first_user_message": True},
    "pydantic-ai-summary": {
        "keep_messages": 20,
        "keep_tokens": None,
        "preserve_first_user_message": True,
        "incremental": True,
        "tool_return_max_chars": 500,
    },
    "sliding-window": {"max_tokens": None, "keep_system": True, "persist": False},
    "google-adk-window": {
        "events_compaction_config.compaction_interval": 3,
        "events_compaction_config.overlap_size": 1,
        "events_compaction_config.token_threshold": None,
        "max_llm_calls": 500,
    },
    "google-adk-tokens": {
        "events_compaction_config.token_threshold": 100_000,
        "events_compaction_config.event_retention_size": 10,
        "events_compaction_config.compaction_interval": None,
    },
    "none": {},
}


REQUIRED: dict[str, dict[str, object]] = {"swe-agent": {"n": 5}}
"""Parameters a source leaves without a default, as the scenarios give them."""


def field_at(params: object, path: str) -> object:
    value = params
    for part in path.split("."):
        value = getattr(value, part)
    return dataclasses.asdict(value) if dataclasses.is_dataclass(value) else value  # type: ignore[arg-type]


def test_every_family_of_the_design_table_has_a_preset() -> None:
    names = list(PRESETS)
    assert names == ["agentscope", *DEFAULTS] and len(set(names)) == len(names)
    with pytest.raises(KeyError, match="known: agentscope, nonoka"):
        preset("nonok")


@pytest.mark.parametrize("name", list(DEFAULTS))
def test_each_preset_uses_its_sources_defaults(name: str) -> None:
    info = preset(name)
    params = info.params(**REQUIRED.get(name, {}))
    for path, expected in DEFAULTS[name].items():
        assert field_at(params, path) == expected, path
    required = dict.fromkeys(REQUIRED.get(name, {}), "(required)")
    assert dataclasses.is_dataclass(params)
    assert info.defaults() == {**dataclasses.asdict(params), **required}  # type: ignore[arg-type]
    assert type(params).__dataclass_params__.frozen  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", list(DEFAULTS))
def test_each_strategy_describes_its_parameters_and_source(name: str) -> None:
    info = preset(name)
    strategy = info.build(info.params(**REQUIRED.get(name, {})), CTXLAB_TEXTS)
    assert strategy.name == name
    described = strategy.describe()  # type: ignore[attr-defined]
    given = {**info.defaults(), **REQUIRED.get(name, {})}
    assert described == {"name": name, "source": info.source, "params": given}
    assert strategy.params() == given  # type: ignore[attr-defined]
    assert info.summary and info.source and name in info.describe()


def test_sources_name_what_they_follow() -> None:
    sources = {p.name: p.source for p in PRESETS.values()}
    assert "nonoka/core/memory.py" in sources["nonoka"]
    assert "clear_tool_uses_20250919" in sources["anthropic-clear"]
    assert "ClearToolUsesEdit" in sources["langchain-clear"]
    assert "SummarizationMiddleware" in sources["langchain-summary"]
    assert "filesystem.py" in sources["deepagents"]
    assert "LLMSummarizing" in sources["openhands"] and "Complexity Trap" in sources["openhands-hybrid"]
    assert "LastNObservations" in sources["swe-agent"] and "#33245" in sources["sliding-window"]
    assert "SlidingWindowConversationManager" in sources["strands-sliding-window"]
    assert "SummarizingConversationManager" in sources["strands-summarizing"]
    assert "ToolOutputTrimmer" in sources["openai-agents-trimmer"]
    assert "SessionSettings.limit" in sources["openai-agents-session"]
    assert "ClearToolResults" in sources["pydantic-ai-clear"]
    assert "SlidingWindowCompaction" in sources["pydantic-ai-window"]
    assert "SummarizingCompaction" in sources["pydantic-ai-summary"]


def test_presets_build_with_other_parameters() -> None:
    info = preset("anthropic-clear")
    strategy = info.strategy(info.params(trigger=5, keep=1))
    assert isinstance(strategy, StepStrategy) and strategy.params()["trigger"] == 5


@pytest.mark.parametrize("name", list(PRESETS))
def test_every_preset_says_what_it_does_with_a_models_reasoning(name: str) -> None:
    """`ctxlab presets -v` tells each preset's handling of thinking (README, Protocol safety)."""
    assert any("thinking" in note or "reasoning" in note for note in PRESETS[name].remarks)


@pytest.mark.parametrize("name", ["openhands", "openhands-hybrid"])
def test_the_openhands_presets_say_they_handle_images_as_the_sdk_does_without_vision(name: str) -> None:
    """`ctxlab presets -v` tells the behaviour of CHECKLIST OpenHands 24, no longer a deviation."""
    notes = [note for note in PRESETS[name].remarks if "image" in note]
    assert len(notes) == 1 and "test-model" in notes[0] and "declared" not in notes[0]


@pytest.mark.parametrize("name", ["openai-agents-trimmer", "openai-agents-session"])
def test_the_openai_agents_presets_say_how_their_images_are_sent(name: str) -> None:
    """`ctxlab presets -v` tells CHECKLIST OA21: a tool output's images as the chat-completions
    model sends them (a behaviour), a user image's detail (the declared half)."""
    notes = [note for note in PRESETS[name].remarks if "OA21" in note]
    assert len(notes) == 1 and "chat-completions" in notes[0] and "placeholder" in notes[0]
    behaviour, deviation = notes[0].split("Deviation:")
    assert "detail" in deviation and "detail" not in behaviour


def test_the_preset_whose_summary_offers_no_tools_says_two_apis_refuse_it() -> None:
    """`ctxlab presets -v` names the presets whose summary requests hold tool calls with no tools
    offered (README, Protocol safety), and their runs count it."""
    declared = [name for name in PRESETS if PRESETS[name].undeclared_tools]
    assert declared == ["strands-summarizing"]
    notes = [note for note in PRESETS["strands-summarizing"].remarks if "offers no tools" in note]
    assert len(notes) == 1 and "generate_summary" in notes[0] and "violations_anthropic" in notes[0]


@pytest.mark.parametrize("name", ["pydantic-ai-clear", "pydantic-ai-window", "pydantic-ai-summary"])
def test_the_pydantic_ai_presets_declare_what_real_transcripts_showed(name: str) -> None:
    """`ctxlab presets -v` tells the declared deviations PA24 (an empty answer) and PA25
    (arguments that are no JSON object), and the behaviour of PA26 (a tool's files), no longer a
    deviation."""
    notes = PRESETS[name].remarks
    for row, words in (("PA24", "no text and no call"), ("PA25", "INVALID_JSON")):
        assert sum(row in note and words in note for note in notes) == 1, row
    files = [note for note in notes if "file a tool returned" in note]
    assert len(files) == 1 and "declared" not in files[0] and "PA26" not in files[0]


def test_presets_verbose_says_which_families_loop_limit_is_their_own() -> None:
    """A family with its own loop limit defaults `react.max_iters` to it, and `ctxlab presets
    -v` says so for it alone."""
    from io import StringIO

    from ctxlab.cli import main
    from ctxlab.presets.registry import ENTRIES

    out = StringIO()
    assert main(["presets", "-v"], out=out) == 0
    blocks = re.split(r"\n(?=\S)", out.getvalue())
    for name, info in PRESETS.items():
        (block,) = [b for b in blocks if b.split()[0] == name]
        default = ENTRIES[name].model_fields["react"].get_default(call_default_factory=True).max_iters
        if info.loop_limit is None:
            assert "loop limit" not in block and default == 50
        else:
            assert f"react.max_iters defaults to {info.loop_limit:,}" in block
            assert default == info.loop_limit > 50
