"""The bad-input corpus: every mistake exits 2 through the CLI with a located message, no traceback,
and writes nothing."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from ctxlab.cli import main
from ctxlab.texts.openhands import openhands_texts
from tests.scenarios.files import SWEPT, TINY, write

ROOT = Path(__file__).resolve().parents[2]


def _replace(old: str, new: str) -> Callable[[Path], Path]:
    assert old in TINY or old in SWEPT

    def make(folder: Path) -> Path:
        base = TINY if old in TINY else SWEPT
        return write(folder, base.replace(old, new))

    return make


def _raw(content: bytes) -> Callable[[Path], Path]:
    return lambda folder: write(folder, content)


def _directory(folder: Path) -> Path:
    (folder / "dir.yaml").mkdir()
    return folder / "dir.yaml"


def _missing_trace(folder: Path) -> Path:
    return write(
        folder, TINY.replace("generator: {name: retrieval, params: {rounds: 4}}", "trace: {path: gone.jsonl}")
    )


def _linked_trace(target: str) -> Callable[[Path], Path]:
    """A scenario whose trace is a symbolic link to `target` (a missing file, or the link itself)."""

    def make(folder: Path) -> Path:
        (folder / "t.jsonl").symlink_to(folder / target)
        trace = "trace: {path: t.jsonl}"
        return write(folder, TINY.replace("generator: {name: retrieval, params: {rounds: 4}}", trace))

    return make


def _malformed_trace(folder: Path) -> Path:
    (folder / "t.jsonl").write_text('{"role": "user", "content": "hi"}\n{not json\n', encoding="utf-8")
    return write(
        folder, TINY.replace("generator: {name: retrieval, params: {rounds: 4}}", "trace: {path: t.jsonl}")
    )


def _swept_same_transcript(second: str) -> Callable[[Path], Path]:
    """A sweep over two transcript paths that name the same bytes: the file again by another
    path, or a copy of it."""

    def make(folder: Path) -> Path:
        text = '{"role": "user", "content": "hi"}\n{"role": "assistant", "content": "hello"}\n'
        (folder / "t.jsonl").write_text(text, encoding="utf-8")
        (folder / "copy.jsonl").write_text(text, encoding="utf-8")
        (folder / "other.jsonl").write_text(text.replace("hello", "hi there"), encoding="utf-8")
        trace = "trace: {path: t.jsonl}"
        sweep = f"sweep:\n  workload.trace.path: [t.jsonl, other.jsonl, {second}]\n"
        return write(folder, TINY.replace("generator: {name: retrieval, params: {rounds: 4}}", trace) + sweep)

    return make


HUGE_RESULT = "script: {turns: [{user: hi, rounds: [{calls: [{tool: r, result: {bytes: 1000000000000}}]}]}]}"


def _swept_generator_named(name: str) -> Callable[[Path], Path]:
    swept = SWEPT.replace("name: retrieval", f"name: {name}").replace(
        "model.context_size: [4000, 6000]", "workload.generator.params.rounds: [4, 6]"
    )
    return lambda folder: write(folder, swept)


def _preset_entry(preset: str, settings: str) -> Callable[[Path], Path]:
    """TINY with its strategy replaced by `preset` and `settings` (lines of the entry, from line 9)."""
    return _replace("  - preset: agentscope\n", f"  - preset: {preset}\n{settings}")


def _swept_clearing(folder: Path) -> Path:
    swept = SWEPT.replace(
        "  - name: none\n    preset: none\n", "  - name: clear\n    preset: anthropic-clear\n"
    )
    swept = swept.replace(
        "strategies.agentscope.context.trigger_ratio: [0.6, 0.8]", "strategies.clear.keep: [1, -1]"
    )
    return write(folder, swept)


CORPUS: dict[str, tuple[Callable[[Path], Path], str]] = {
    "unknown key": (
        _replace("  - preset: agentscope\n", "  - preset: agentscope\n    contxt: {trigger_ratio: 0.5}\n"),
        ":9:5: strategies[0].contxt: unknown key 'contxt' (did you mean 'context'?)",
    ),
    "wrong type": (
        _replace("context_size: 4000", "context_size: lots"),
        ":6:3: model.context_size: 'lots' is invalid: Input should be a valid integer",
    ),
    "out-of-range ratio": (
        _replace("  - preset: agentscope\n", "  - preset: agentscope\n    context: {trigger_ratio: 1.0}\n"),
        ":9:15: strategies[0].context.trigger_ratio: 1.0 is above the maximum 0.9; use 0.9 or less",
    ),
    "reserve at or above trigger": (
        _replace(
            "  - preset: agentscope\n",
            "  - preset: agentscope\n    context: {trigger_ratio: 0.5, reserve_ratio: 0.5}\n",
        ),
        "strategies[0].context: reserve_ratio 0.5 must be below trigger_ratio 0.5",
    ),
    "a negative tool-result limit": (
        _replace(
            "  - preset: agentscope\n", "  - preset: agentscope\n    context: {tool_result_limit: -1}\n"
        ),
        ":9:15: strategies[0].context.tool_result_limit: tool_result_limit -1 is negative: AgentScope "
        "takes it, offloads every result as a limit of 0 does, and fails on a result with no output; "
        "use 0 to offload every result, or a positive token count",
    ),
    "bad template": (
        _replace(
            "  - preset: agentscope\n", "  - preset: agentscope\n    injection: {template: 'Now: {time}'}\n"
        ),
        "strategies[0].injection.template: template 'Now: {time}' lacks the '{runtime_state}' placeholder",
    ),
    "a parameter rule broken by one setting": (
        _preset_entry("anthropic-clear", "    trigger: 1000\n    keep: -1\n"),
        ":10:5: strategies[0].keep: keep=-1: Anthropic's clear_tool_uses takes a count of tool uses "
        "here, and a count is not negative; use 0 or more",
    ),
    "a yes/no value where a number goes": (
        _preset_entry("anthropic-clear", "    trigger: 1000\n    keep: yes\n"),
        ":10:5: strategies[0].keep: true is a yes/no value, not a number (YAML reads yes, no, on and "
        "off as yes/no too); write a number",
    ),
    "a number where a yes/no value goes": (
        _preset_entry("sliding-window", "    persist: 1\n"),
        ":9:5: strategies[0].persist: 1 is not true or false; write true or false",
    ),
    "a yes/no value in a generator's parameters": (
        _replace("params: {rounds: 4}", "params: {rounds: on}"),
        ":4:41: workload.generator.params.rounds: true is a yes/no value, not a number",
    ),
    "a nested setting a rule refuses": (
        _preset_entry("openhands", "    condenser:\n      defaults: agent\n      max_size: 0\n"),
        ":11:7: strategies[0].condenser.max_size: condenser max_size=0: the SDK's "
        "LLMSummarizingCondenser refuses it (its own check); use a value above 0",
    ),
    "a rule relating two nested settings": (
        _preset_entry("openhands", "    condenser:\n      max_size: 8\n"),
        ":9:5: strategies[0].condenser: condenser keep_first=4 leaves no room for a tail with "
        "max_size=8: keep_first must be below max_size // 2 - 1 (the SDK's own check); lower "
        "keep_first or raise max_size",
    ),
    "a nested setting in a flow mapping": (
        _preset_entry("openhands-hybrid", "    masking: {n: 0}\n"),
        ":9:15: strategies[0].masking.n: n=0: SWE-agent keeps a positive number of observations",
    ),
    "a setting nested two deep": (
        _preset_entry("deepagents", "    summarization:\n      truncate_args_settings: {max_length: -1}\n"),
        ":10:32: strategies[0].summarization.truncate_args_settings.max_length: max_length is at "
        "least 0, got -1",
    ),
    "an ADK compaction setting below its bound": (
        _preset_entry(
            "google-adk-window",
            "    events_compaction_config:\n      compaction_interval: 0\n      overlap_size: 1\n",
        ),
        ":10:7: strategies[0].events_compaction_config.compaction_interval: compaction_interval "
        "must be at least 1, got 0",
    ),
    "an ADK pair set by half (the window preset leaves the token pair unset)": (
        _preset_entry("google-adk-window", "    events_compaction_config: {token_threshold: 1000}\n"),
        ":9:5: strategies[0].events_compaction_config.event_retention_size: token_threshold and "
        "event_retention_size must be set together (ADK's EventsCompactionConfig has no default for "
        "either); token_threshold is set, so set event_retention_size too",
    ),
    "a LangChain threshold, in the package's words": (
        _preset_entry("langchain-summary", "    keep: [fraction, 2]\n"),
        ":9:5: strategies[0].keep: a keep fraction is in (0, 1], got 2.0",
    ),
    "a pydantic-ai setting, in the package's words": (
        _preset_entry("pydantic-ai-summary", "    max_messages: 10\n    tool_return_max_chars: 0\n"),
        ":10:5: strategies[0].tool_return_max_chars: tool_return_max_chars must be positive.",
    ),
    "two pydantic-ai triggers that exclude each other": (
        _preset_entry("pydantic-ai-window", "    max_tokens: 1000\n    max_fraction: 0.5\n"),
        ":8:5: strategies[0]: Set at most one of max_tokens or max_fraction.",
    ),
    "an OpenAI Agents trimmer setting": (
        _preset_entry("openai-agents-trimmer", "    recent_turns: 0\n"),
        ":9:5: strategies[0].recent_turns: recent_turns must be >= 1, got 0",
    ),
    "a strands setting": (
        _preset_entry("strands-sliding-window", "    per_turn: 0\n"),
        ":9:5: strategies[0].per_turn: per_turn must be a positive integer, True, or False, got 0",
    ),
    "a nonoka budget below nonoka's own bound": (
        _preset_entry("nonoka", "    budget:\n      reserve_output_tokens: 0\n"),
        ":10:7: strategies[0].budget.reserve_output_tokens: reserve_output_tokens=0: nonoka's runtime "
        "limits refuse a value below 1; use 1 or more (nonoka: 4096)",
    ),
    "a nonoka share that is no share": (
        _preset_entry("nonoka", "    summarize: true\n    summary_share: 1.0e+18\n"),
        ":10:5: strategies[0].summary_share: summary_share=1e+18: a share of the chat is above 0 and "
        "at most 1",
    ),
    "a nonoka summary heading that drops the summary": (
        _preset_entry("nonoka", "    summarize: true\n    summary_heading: History\n"),
        ":10:5: strategies[0].summary_heading: summary_heading lacks the '{summary}' placeholder, so "
        "every summary would be dropped from the context; add '{summary}' where it goes",
    ),
    "a nonoka summary prompt without the conversation": (
        _preset_entry("nonoka", "    summarize: true\n    summary_prompt: 'Summarize {previous_summary}.'\n"),
        ":10:5: strategies[0].summary_prompt: summary_prompt lacks the '{conversation}' placeholder, "
        "so the summarizer would never see the span it replaces",
    ),
    "a sliding window that keeps no message": (
        _preset_entry("sliding-window", "    min_messages: 0\n"),
        ":9:5: strategies[0].min_messages: min_messages=0: the window could then drop every message",
    ),
    "a swept setting a rule refuses": (
        _swept_clearing,
        ":13:30: sweep.strategies.clear.keep[1]: with strategies.clear.keep = -1: "
        "strategies[1].keep: keep=-1: Anthropic's clear_tool_uses takes a count of tool uses",
    ),
    "unknown preset": (
        _replace("  - preset: agentscope\n", "  - preset: agentscop\n"),
        ":8:5: strategies[0].preset: unknown preset 'agentscop' (did you mean 'agentscope'?); "
        "known: agentscope, nonoka, anthropic-clear",
    ),
    "unknown generator": (
        _replace("name: retrieval", "name: retreival"),
        "workload.generator.name: unknown generator 'retreival' (did you mean 'retrieval'?)",
    ),
    "sweep path that names nothing": (
        _replace("model.context_size: [4000, 6000]", "model.context_sise: [4000, 6000]"),
        ":12:3: sweep.model.context_sise: sweep path 'model.context_sise' names nothing: under model: "
        "'context_sise' is not a field here (did you mean 'context_size'?)",
    ),
    "sweep of an unknown strategy": (
        _replace("strategies.agentscope.context", "strategies.agentscop.context"),
        "no strategy is named 'agentscop' (did you mean 'agentscope'?)",
    ),
    "missing trace file": (_missing_trace, ":4:11: workload.trace.path: no such file"),
    "a trace path that is a folder": (
        _replace("generator: {name: retrieval, params: {rounds: 4}}", "trace: {path: .}"),
        "the format is not recognised: a folder that is no strands session directory",
    ),
    "a trace path linked to a missing file": (
        _linked_trace("gone.jsonl"),
        "t.jsonl' is a symbolic link to no file (its target is missing, or the links loop)",
    ),
    "a trace path linked to itself": (
        _linked_trace("t.jsonl"),
        "t.jsonl' is a symbolic link to no file (its target is missing, or the links loop); give the path",
    ),
    "malformed trace file": (_malformed_trace, "workload.trace.path: cannot replay: "),
    "a swept transcript named again by another path": (
        _swept_same_transcript("./t.jsonl"),
        ":10:47: sweep.workload.trace.path[2]: reads as the same setting as workload.trace.path[0] "
        "('t.jsonl') (a file counts by its bytes, not its path), so its runs would repeat",
    ),
    "a swept transcript and a copy of it": (
        _swept_same_transcript("copy.jsonl"),
        ":10:47: sweep.workload.trace.path[2]: reads as the same setting as workload.trace.path[0] "
        "('t.jsonl') (a file counts by its bytes, not its path)",
    ),
    "bad generator parameter": (
        _replace("params: {rounds: 4}", "params: {rounds: 0}"),
        "workload.generator.params.rounds: 0 is below the minimum 1; use 1 or more",
    ),
    "malformed YAML": (_raw(b"name: x\nmodel: {context_size: 4000\n"), ":3:1: invalid YAML"),
    "empty file": (_raw(b""), ":1:1: is empty"),
    "comments only": (_raw(b"# nothing here\n"), ":1:1: is empty"),
    "a directory": (_directory, ":1:1: is a directory"),
    "a binary file": (_raw(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), ":1:1: is binary"),
    "a huge file": (
        _raw(b"# padding\n" * 250_000),
        ":1:1: is 2,500,000 bytes, over the 2,000,000-byte limit",
    ),
    "an object tag": (
        _raw(b"name: !!python/object/apply:os.system ['echo hacked']\n"),
        "the YAML tag 'tag:yaml.org,2002:python/object/apply:os.system' is not allowed",
    ),
    "a custom tag": (_raw(b"name: !include other.yaml\n"), "the YAML tag '!include' is not allowed"),
    "a list instead of a mapping": (_raw(b"- name: x\n"), ":1:1: is a list, not a mapping of scenario keys"),
    "a preset that is not a name": (
        _replace("  - preset: agentscope\n", "  - preset: {name: agentscope}\n"),
        ":8:5: strategies[0].preset: a preset is a name, not {'name': 'agentscope'}; known: agentscope",
    ),
    "a summarizer kind that is not a name": (
        _replace("context_size: 4000", "context_size: 4000\n  summarizer: {kind: [fixed]}"),
        "model.summarizer.kind: a summarizer kind is a name, not ['fixed']; known: fixed, extractive",
    ),
    "a swept generator whose name is not a name": (
        _swept_generator_named("[retrieval]"),
        "workload.generator.name: ['retrieval'] is invalid: Input should be a valid string",
    ),
    "a filler larger than a filler may be": (
        _replace("generator: {name: retrieval, params: {rounds: 4}}", HUGE_RESULT),
        ":4:68: workload.script.turns[0].rounds[0].calls[0].result.bytes: 1000000000000 is above the "
        "maximum 67108864",
    ),
    "a generator count beyond any experiment": (
        _replace("params: {rounds: 4}", "params: {rounds: 10000000000}"),
        "workload.generator.params.rounds: 10000000000 is above the maximum 100000",
    ),
    "a clock advanced past the year 9999": (
        _replace(
            "generator: {name: retrieval, params: {rounds: 4}}",
            "script: {turns: [{user: a, final: b}, {user: c, final: d, advance_seconds: 1.0e+14}]}",
        ),
        ":4:41: workload.script.turns[1]: the clock advanced here leaves the years 1 to 9999",
    ),
    "a strategy that is not a mapping (no class name said)": (
        _replace("  - preset: agentscope\n", "  - preset: agentscope\n  - none\n"),
        ":9:5: strategies[1]: 'none' is not a mapping; use a mapping ({key: value})",
    ),
    "a probe that is not a mapping": (
        _replace(
            "generator: {name: retrieval, params: {rounds: 4}}",
            "generator: {name: retrieval, params: {rounds: 4}}\n  probes: ['turn 0']",
        ),
        ":5:12: workload.probes[0]: 'turn 0' is not a mapping; use a mapping ({key: value})",
    ),
    "a summarizer failure listed twice": (
        _replace("context_size: 4000", "context_size: 4000\n  summarizer: {kind: fixed, fail_on: [1, 1]}"),
        ":7:29: model.summarizer.fail_on: [1, 1] lists 1 more than once; list each invocation once",
    ),
    "a clock start that a zone cannot show": (
        _replace(
            "generator: {name: retrieval, params: {rounds: 4}}",
            "generator: {name: retrieval, params: {rounds: 4}}\n"
            "  clock: {start: 0001-01-01T00:00:00, timezone: Asia/Tokyo}",
        ),
        ":5:11: workload.clock.start: 0001-01-01T00:00:00 (in Asia/Tokyo) is within a day of the dates "
        "a run can show",
    ),
    "a clock start a day from the year 10000": (
        _replace(
            "generator: {name: retrieval, params: {rounds: 4}}",
            "generator: {name: retrieval, params: {rounds: 4}}\n"
            "  clock: {start: '9999-12-31T20:00:00-05:00'}",
        ),
        "start after 0001-01-02 and before 9999-12-31",
    ),
    "a clock advanced to within a day of the year 10000": (
        _replace(
            "generator: {name: retrieval, params: {rounds: 4}}",
            "script: {turns: [{user: a, final: b}, {user: c, final: d, advance_seconds: 251635032000}]}",
        ),
        ":4:41: workload.script.turns[1]: the clock advanced here leaves the years 1 to 9999",
    ),
    "sweep paths that overlap": (
        _replace(
            "model.context_size: [4000, 6000]", "model.context_size: [4000]\n  model: [{context_size: 5000}]"
        ),
        ":13:3: sweep.model: overlaps the sweep path 'model.context_size'",
    ),
    "an infinite price": (
        _replace("context_size: 4000\n", "context_size: 4000\nprices: {output: .inf}\n"),
        ":7:18: prices.output: .inf is not a finite number; write a number",
    ),
    "a price YAML reads as text, which would be infinite": (
        _replace("context_size: 4000\n", "context_size: 4000\nprices: {output: 1e400}\n"),
        ":7:10: prices.output: '1e400' is not a finite number; write a number",
    ),
    "a swept value that would be infinite": (
        _replace("model.context_size: [4000, 6000]", "model.context_size: [4000]\n  prices.output: [1, inf]"),
        ":13:22: sweep.prices.output[1]: with prices.output = 'inf': prices.output: 'inf' is not a finite",
    ),
    "a seed beyond 64 bits": (
        _replace("context_size: 4000\n", "context_size: 4000\nseed: 9223372036854775808\n"),
        ":7:7: seed: 9223372036854775808 is out of range",
    ),
    "unknown summarizer kind": (
        _replace("context_size: 4000", "context_size: 4000\n  summarizer: {kind: fixd}"),
        "model.summarizer.kind: unknown summarizer kind 'fixd' (did you mean 'fixed'?)",
    ),
    "a summarizer given by its kind's name": (
        _replace("context_size: 4000", "context_size: 4000\n  summarizer: fixed"),
        ":7:3: model.summarizer: expected a mapping such as {kind: fixed} or {kind: extractive}",
    ),
    "a summarizer that is no mapping, for sub-agents": (
        _replace("context_size: 4000\n", "context_size: 4000\ndelegate: {summarizer: 3}\n"),
        ":7:12: delegate.summarizer: expected a mapping such as {kind: fixed} or {kind: extractive}",
    ),
    "a scenario name that is no name": (
        _replace("name: tiny", "name: 'my run!'"),
        ":1:1: name: 'my run!' is not a name: use ASCII letters, digits, - and _, starting with a letter "
        "or digit",
    ),
    "a scenario name longer than a file name may hold": (
        _replace("name: tiny", "name: " + "t" * 250),
        ":1:1: name: 'tttttttttttttttttttttttttttttttttttttttttttttttttttttttt... is longer than 100 "
        "characters; shorten it",
    ),
    "a strategy name longer than a file name may hold": (
        _replace("- preset: agentscope", "- {name: " + "s" * 230 + ", preset: agentscope}"),
        ":8:6: strategies[0].name: 'ssssssssssssssssssssssssssssssssssssssssssssssssssssssss... is longer "
        "than 100 characters; shorten it",
    ),
    "a surrogate escaped in a double-quoted string": (
        _replace("description: Four retrieval rounds in a small window.", 'description: "\\ud83d\\ude00"'),
        ":2:14: description: \\ud83d is a surrogate (half of a UTF-16 pair), not a character, and YAML "
        "joins no pairs; write the character itself, or its \\U escape of 8 hex digits",
    ),
    "a blank probe value": (
        _replace("workload:\n", "workload:\n  probes: [{kind: rule, key: r, value: '', where: system}]\n"),
        ":4:33: workload.probes[0].value: '' is blank: a blank value is found in every text or in none",
    ),
    "a blank probe value in a generator's probes": (
        _replace("params: {rounds: 4}", "params: {rounds: 4, probes: [{key: k, value: ' ', where: turn 0}]}"),
        "workload.generator.params.probes[0].value: ' ' is blank",
    ),
    "a need at a turn the workload does not have": (
        _raw(
            TINY.replace(
                "params: {rounds: 4}", "params: {rounds: 4, probes: [{key: k, value: v, where: turn 0}]}"
            )
            .replace("4000\n", "4000\n  agent: {kind: policy, needs: [{key: k, turn: 1}]}\n")
            .encode()
        ),
        "model.agent.needs[0].turn: turn 1 does not exist: the workload has 1 turn(s), 0 to 0, so this "
        "need would never come due; name one of them",
    ),
    "a need at a round a swept workload does not have": (
        _raw(
            SWEPT.replace(
                "params: {rounds: 6}", "params: {rounds: 6, probes: [{key: k, value: v, where: turn 0}]}"
            )
            .replace("4000\n", "4000\n  agent: {kind: policy, needs: [{key: k, turn: 0, round: 5}]}\n", 1)
            .replace("  model.context_size: [4000, 6000]\n", "  workload.generator.params.rounds: [6, 4]\n")
            .encode()
        ),
        "sweep.workload.generator.params.rounds[1]: with workload.generator.params.rounds = 4: "
        "model.agent.needs[0].round: round 5 does not exist: turn 0 scripts 4 round(s)",
    ),
    "a checkpoint without a workspace": (
        _replace(
            "  - preset: agentscope",
            "  - {preset: nonoka, summarize: true, checkpoint: true, workspace: none}",
        ),
        ":8:57: strategies[0].workspace: workspace: none keeps no files, but checkpoint: true writes each "
        "summary to the workspace (checkpoint: false keeps it in the context); use workspace: memory or "
        "directory",
    ),
    "a swept workspace that leaves a checkpoint none": (
        _raw(
            TINY.replace("  - preset: agentscope", "  - {preset: nonoka, summarize: true, checkpoint: true}")
            .__add__("sweep:\n  strategies.nonoka.workspace: [memory, none]\n")
            .encode()
        ),
        ":10:41: sweep.strategies.nonoka.workspace[1]: with strategies.nonoka.workspace = 'none': "
        "strategies[0].workspace: workspace: none keeps no files",
    ),
    "sub-agents that checkpoint under a parent without a workspace": (
        _replace(
            "  - preset: agentscope",
            "  - {preset: agentscope, workspace: none}\n"
            "delegate:\n  strategy: {preset: nonoka, summarize: true, checkpoint: true}",
        ),
        ":8:26: strategies[0].workspace: workspace: none keeps no files, but sub-agents run in their "
        "parent's workspace and delegate.strategy's checkpoint: true writes each summary",
    ),
    "a fixed summarizer's key under an extractive one": (
        _replace("context_size: 4000", "context_size: 4000\n  summarizer: {kind: extractive, text: hi}"),
        "model.summarizer.text: unknown key 'text'; remove it or fix its spelling; allowed here: fail_on, "
        "fail_mode, window, kind, fact_recall, rule_recall, artifact_recall, field_chars\n",
    ),
    "a swept summarizer kind that refuses the other kind's key": (
        _raw(
            SWEPT.replace("4000\n", "4000\n  summarizer: {kind: fixed, text: hi}\n", 1)
            .replace("  model.context_size: [4000, 6000]\n", "  model.summarizer.kind: [fixed, extractive]\n")
            .encode()
        ),
        ":13:34: sweep.model.summarizer.kind[1]: with model.summarizer.kind = 'extractive': "
        "model.summarizer.text: unknown key 'text'; remove it or fix its spelling; allowed here: fail_on, "
        "fail_mode, window, kind, fact_recall, rule_recall, artifact_recall, field_chars\n",
    ),
    "a whole number in an exponent form YAML reads as text": (
        _replace("context_size: 4000", "context_size: 4e3"),
        ":6:3: model.context_size: '4e3' is invalid: Input should be a valid integer, unable to parse "
        "string as an integer; YAML reads it as text, not a number; write 4000\n",
    ),
    "a number with a thousands separator inside braces": (
        _replace("params: {rounds: 4}", "params: {rounds: 4, result_bytes: 6,012}"),
        ":4:68: workload.generator.params: the key '012' reads as a number in YAML, and keys are names; "
        "inside {...} a comma separates entries, so a number written with a thousands separator "
        "(128,000) is cut there: write the number without one (128000), or quote it ('012': ...) if it "
        "is a key\n",
    ),
    "a misspelt strategies key is told before the sweep paths it leaves naming nothing": (
        _raw(SWEPT.replace("strategies:\n", "strategy:\n").encode()),
        ":6:1: strategy: unknown key 'strategy' (did you mean 'strategies'?)",
    ),
    "an entry's key another preset has, beside the sweep path into it": (
        _raw(
            SWEPT.replace(
                "    preset: agentscope\n", "    preset: nonoka\n    context: {trigger_ratio: 0.6}\n"
            )
            .replace("  strategies.agentscope.context.trigger_ratio: [0.6, 0.8]\n", "")
            .replace(
                "  model.context_size: [4000, 6000]\n",
                "  strategies.agentscope.context.trigger_ratio: [0.6]\n",
            )
            .encode()
        ),
        ":9:5: strategies[0].context: unknown key 'context'",
    ),
    "a swept generator whose params are the other generator's": (
        _raw(
            SWEPT.replace(
                "  model.context_size: [4000, 6000]\n", "  workload.generator.name: [retrieval, swe_loop]\n"
            )
            .replace("  strategies.agentscope.context.trigger_ratio: [0.6, 0.8]\n", "")
            .encode()
        ),
        ":12:40: sweep.workload.generator.name[1]: with workload.generator.name = 'swe_loop': "
        "workload.generator.params.rounds: unknown key 'rounds'",
    ),
}


def run_cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(args), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("case", sorted(CORPUS))
@pytest.mark.parametrize("command", ["validate", "run"])
def test_bad_input_exits_2_located_and_writes_nothing(tmp_path: Path, case: str, command: str) -> None:
    make, needle = CORPUS[case]
    refused_at_load(tmp_path, make, command, needle)


def refused_at_load(
    tmp_path: Path, make: Callable[[Path], Path], command: str, needle: str
) -> tuple[Path, str]:
    """Run `command` (`validate` or `run`) on the file `make` writes into a folder of its own:
    it must exit 2 with `needle` in a message located in that file, print nothing else, and
    write nothing (no results, no file beside the scenario). Gives back the file and what was
    printed."""
    folder = tmp_path / "in"
    folder.mkdir()
    path = make(folder)
    results = tmp_path / "results"
    args = [command, str(path)] + (["--out", str(results)] if command == "run" else [])
    before = sorted(p.name for p in folder.iterdir())
    code, out, err = run_cli(*args)
    assert code == 2, err
    assert needle in err, err
    assert err.startswith(str(path) + ":"), err
    assert "Traceback" not in err and out == ""
    assert not results.exists()
    assert sorted(p.name for p in folder.iterdir()) == before
    return path, err


@pytest.mark.parametrize("interpreter", ["missing", "without the package"])
@pytest.mark.parametrize("command", ["validate", "run"])
def test_texts_whose_environment_is_missing_are_a_located_problem(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
    interpreter: str,
    command: str,
) -> None:
    python = str(tmp_path / "no-python") if interpreter == "missing" else sys.executable
    monkeypatch.setenv("CTXLAB_OPENHANDS_PYTHON", python)
    openhands_texts.cache_clear()  # a set another test read in this process would be reused
    request.addfinalizer(openhands_texts.cache_clear)  # and this test's environment not kept
    swept = "sweep:\n  model.context_size: [4000, 5000]\n"
    entry = "{preset: openhands, texts: openhands}"
    path = write(tmp_path, TINY.replace("preset: agentscope", entry) + swept)
    results = tmp_path / "results"
    code, out, err = run_cli(command, str(path), *(["--out", str(results)] if command == "run" else []))
    assert code == 2, err
    assert err.startswith(f"{path}:8:25: strategies[0].texts: "), err
    assert "openhands-sdk==1.58.2" in err and "make openhands-env" in err, err
    assert len(err.splitlines()) == 1 and "Traceback" not in err and out == ""
    assert not results.exists()


def test_every_problem_of_every_file_is_reported_before_anything_runs(tmp_path: Path) -> None:
    good = write(tmp_path, TINY, "good.yaml")
    bad = write(tmp_path, TINY.replace("context_size: 4000", "context_size: -1"), "bad.yaml")
    worse = write(tmp_path, b"", "empty.yaml")
    code, _, err = run_cli("run", str(good), str(bad), str(worse), "--out", str(tmp_path / "out"))
    assert code == 2
    assert f"{bad}:6:3: model.context_size: -1 is not above the minimum 0" in err
    assert f"{worse}:1:1: is empty" in err
    assert not (tmp_path / "out").exists()


def test_an_unknown_preset_hides_no_other_problem_and_problems_come_in_file_order(tmp_path: Path) -> None:
    """An unknown preset's entry is the only one not checked (its keys are an unknown preset's);
    the other entries' problems, a sweep's and the top-level ones are told with it, by line."""
    text = (
        "name: multi\nsed: 1\nworkload: {generator: {name: retrieval}}\nmodel: {context_size: 4000}\n"
        "strategies:\n  - {preset: agentscop, contxt: 1}\n  - {preset: none, foo: 1}\n"
        "  - {preset: nonoka, budget: {max_token: 1}}\nsweep:\n  model.context_sise: [1, 2]\n"
    )
    path = write(tmp_path, text)
    code, _, err = run_cli("validate", str(path))
    assert code == 2
    assert [line.split(": ", 2)[:2] for line in err.splitlines()] == [
        [f"{path}:2:1", "sed"],
        [f"{path}:6:6", "strategies[0].preset"],
        [f"{path}:7:20", "strategies[1].foo"],
        [f"{path}:8:31", "strategies[2].budget.max_token"],
        [f"{path}:10:3", "sweep.model.context_sise"],
    ]


def test_two_scenarios_with_one_name_are_refused(tmp_path: Path) -> None:
    first, second = write(tmp_path, TINY, "a.yaml"), write(tmp_path, TINY, "b.yaml")
    code, _, err = run_cli("run", str(first), str(second), "--out", str(tmp_path / "out"))
    assert code == 2 and f"{second}:1:1: name: 'tiny' is also the name of {first}" in err


def test_an_out_path_that_is_a_file_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path, TINY)
    target = write(tmp_path, b"x", "results")
    code, _, err = run_cli("run", str(path), "--out", str(target))
    assert code == 2 and "is a file; give a folder" in err
    code, _, err = run_cli("run", str(path), "--out", str(target / "sub" / "dir"))
    assert code == 2 and f"{target} is a file, so no folder can be made inside it" in err


def test_a_date_less_time_format_runs_with_a_warning(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        TINY.replace(
            "  - preset: agentscope\n", "  - preset: agentscope\n    injection: {time_format: '%H:%M'}\n"
        ),
    )
    code, out, err = run_cli("validate", str(path))
    assert code == 0 and "ok:" in out
    assert f"{path}:9:17: strategies[0].injection.time_format: warning: '%H:%M' has no full date" in err


def test_the_installed_command_prints_no_traceback(tmp_path: Path) -> None:
    path = write(tmp_path, b"name: !!python/object/apply:os.system ['touch pwned']\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "ctxlab", "validate", str(path)],
        capture_output=True,
        text=True,
        check=False,
        env=env,
        cwd=tmp_path,
    )
    assert done.returncode == 2 and "is not allowed" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "pwned").exists()
