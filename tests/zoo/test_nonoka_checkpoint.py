"""nonoka's summary checkpointed outside the window: written to the workspace at a counter path,
read back byte for byte, referenced in the context by `active_checkpoint: <path>` and a one-line
preview, folded into the next summary, and found again by an agent that reads it."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.core.compaction.checkpoint import CHECKPOINT_REFERENCE, preview, reference
from ctxlab.core.messages.blocks import TextBlock, text_pieces
from ctxlab.core.world.retention import Probe
from ctxlab.core.world.script import ScriptedRound, assign_call_ids
from ctxlab.engine.session import run_script
from ctxlab.engine.tools import READ_TOOL, ReadOffloaded, with_read_tool
from ctxlab.engine.workspace import InMemoryWorkspace, Workspace
from ctxlab.experiments.execute import execute
from ctxlab.experiments.grid import expand
from ctxlab.experiments.workspace import DirectoryWorkspace
from ctxlab.models.policy import Need, PolicyModel
from ctxlab.models.scripted import ScriptModel
from ctxlab.models.summarizers import FixedSummarizer, summary_text_of
from ctxlab.presets.nonoka.preset import PRESET, NonokaParams
from ctxlab.presets.registry import ENTRIES, params_of
from ctxlab.scenarios.load import load_scenario
from ctxlab.texts import CTXLAB_TEXTS
from tests.zoo.runs import FIELDS, one_turn, run, text, tool_call

SUMMARY = summary_text_of(FIELDS)


def bash(k: int, size: int = 3000) -> ScriptedRound:
    return ScriptedRound(
        calls=(tool_call("bash", f'{{"command": "make test-{k}"}}', text(size, tag=chr(97 + k)), False),)
    )


def nonoka(checkpoint: bool, **params: object) -> object:
    return PRESET.build(NonokaParams(summarize=True, checkpoint=checkpoint, **params), CTXLAB_TEXTS)  # type: ignore[arg-type]


def test_each_summary_goes_to_a_numbered_checkpoint_and_the_context_keeps_its_reference() -> None:
    ran = run(nonoka(True), one_turn(*(bash(k) for k in range(24))))  # type: ignore[arg-type]
    summaries = [c for c in ran.outcome.calls if c.kind == "summary"]
    paths = [p for p in ran.workspace.paths() if p.startswith("checkpoints/")]
    assert len(summaries) >= 2 and paths == [
        f"checkpoints/chk-{n:04d}.md" for n in range(1, len(summaries) + 1)
    ]
    assert all(ran.workspace.read(p) == SUMMARY.encode("utf-8") for p in paths)  # byte for byte
    assert ran.events().count("checkpointed") == len(summaries)
    expected = "[History summary]\n" + reference(CHECKPOINT_REFERENCE, paths[-1], SUMMARY, 160)
    assert ran.outcome.state.summary == expected
    assert "\n".join(expected.splitlines()[2:]) == "preview: " + preview(SUMMARY, 160)
    assert SUMMARY not in str(ran.sent()[-1])  # only the preview is sent, not the summary
    later = [
        "".join(p for m in r.messages for b in m.blocks for p in text_pieces(b))
        for r in ran.summarizer.requests[1:]
    ]
    assert later and all(SUMMARY in t for t in later)  # the checkpoint is read back into the next one
    assert max(ran.reasoning()) <= 6144 and ran.violations() == []


def test_without_checkpoint_the_summary_stays_in_the_context_as_before() -> None:
    ran = run(nonoka(False), one_turn(*(bash(k) for k in range(24))))  # type: ignore[arg-type]
    assert ran.outcome.state.summary == "[History summary]\n" + SUMMARY
    assert not [p for p in ran.workspace.paths() if p.startswith("checkpoints/")]
    assert "checkpointed" not in ran.events()


def test_a_checkpoint_needs_a_workspace() -> None:
    with pytest.raises(ValueError, match="checkpoint needs a workspace"):
        run(nonoka(True), one_turn(*(bash(k) for k in range(24))), workspace=False)  # type: ignore[arg-type]


def test_a_reference_without_the_active_checkpoint_line_is_refused() -> None:
    with pytest.raises(ValueError, match="active_checkpoint"):
        NonokaParams(checkpoint=True, checkpoint_reference="see {path}")
    with pytest.raises(ValueError, match="at least 1"):
        NonokaParams(checkpoint_preview_chars=0)


@given(st.text(min_size=1).filter(str.strip))
def test_a_checkpoint_round_trips_byte_for_byte_and_its_preview_is_one_short_line(summary: str) -> None:
    workspace = InMemoryWorkspace()
    path = workspace.offload_summary(summary)
    assert path == "checkpoints/chk-0001.md" and workspace.read(path) == summary.encode("utf-8")
    shown = preview(summary, 40)
    assert len(shown) <= 40 and "\n" not in shown and "\r" not in shown
    assert preview(summary, 40) == shown  # the same text, the same preview


def test_checkpoint_files_stay_inside_a_directory_workspace(tmp_path: Path) -> None:
    root = tmp_path / "workspace"
    files = DirectoryWorkspace(root=root)
    summary = "../../escape\nsecond line"
    script = assign_call_ids(one_turn(*(bash(k) for k in range(24))))
    run_script(
        script,
        nonoka(True, checkpoint_reference="active_checkpoint: {path}\n../{preview}"),  # type: ignore[arg-type]
        model=ScriptModel(script),
        summarizer=FixedSummarizer(fields=FIELDS, text=summary),
        texts=CTXLAB_TEXTS,
        context_size=200_000,
        workspace=files,
    )
    written = sorted(p for p in root.rglob("*") if p.is_file())
    assert written and all(p.resolve().is_relative_to(root.resolve()) for p in written)
    checkpoints = [p.relative_to(root).as_posix() for p in written if p.parent.name == "checkpoints"]
    assert checkpoints[:1] == ["checkpoints/chk-0001.md"]
    assert files.read("checkpoints/chk-0001.md") == summary.encode("utf-8")


def reread_run(checkpoint: bool, workspace: Workspace) -> PolicyModel:
    """A fact in the first result, summarized away; the agent needs it before the last round."""
    fact = Probe(kind="fact", key="db-port", value="5432", where="turn 0 round 0")
    rounds = [
        ScriptedRound(
            calls=(tool_call("bash", '{"command": "cat cfg"}', (TextBlock(text="db-port: 5432"),)),)
        ),
        *(bash(k) for k in range(1, 24)),
    ]
    script = with_read_tool(assign_call_ids(one_turn(*rounds)), CTXLAB_TEXTS)
    model = PolicyModel.for_texts(
        script, CTXLAB_TEXTS, probes=(fact,), needs=(Need(key="db-port", turn=0, round=23),)
    )
    run_script(
        script,
        nonoka(checkpoint),  # type: ignore[arg-type]
        model=model,
        summarizer=FixedSummarizer(fields=FIELDS, text="History of the build.\n" + fact.text),
        texts=CTXLAB_TEXTS,
        context_size=200_000,
        workspace=workspace,
        builtins={READ_TOOL: ReadOffloaded(CTXLAB_TEXTS)},
    )
    return model


def test_the_agent_reads_the_checkpoint_back_when_it_needs_what_only_the_checkpoint_holds() -> None:
    model = reread_run(True, InMemoryWorkspace())
    (reread, found) = [(e.kind, e.path) for e in model.events]
    assert reread[0] == "reread" and reread[1].startswith("checkpoints/chk-")
    assert found == ("found", reread[1])  # the one read of the checkpoint in force brought it back
    inline = reread_run(False, InMemoryWorkspace())
    assert [e.kind for e in inline.events] == ["found"]  # the summary in the context shows it


def test_the_checkpointed_summary_scenario_measures_the_re_read_against_the_summary_kept() -> None:
    """`scenarios/checkpointed-summary.yaml`: the same run with the summary in the window or
    checkpointed; checkpointed, requests carry a shorter summary and the agent pays one re-read."""
    root = Path(__file__).resolve().parents[2]
    configs = expand(load_scenario(root / "scenarios" / "checkpointed-summary.yaml"))
    ran = {c.config["strategy"].get("checkpoint", False): execute(c) for c in configs}
    kept, written = ran[False], ran[True]
    assert kept.status == written.status == "ok", written.error
    assert written.measures["calls"] == kept.measures["calls"] + 1  # the Read of the checkpoint
    assert kept.measures["offloaded_bytes"] == 0 < written.measures["offloaded_bytes"]
    assert kept.measures["retention_facts"] == written.measures["retention_facts"] == 1.0
    last = [r["summary_chars"] for r in written.calls if r["kind"] == "reasoning"][-1]
    assert 0 < last < [r["summary_chars"] for r in kept.calls if r["kind"] == "reasoning"][-1]
    assert sum(1 for e in written.events if e["kind"] == "checkpointed") == written.measures["compressions"]


def test_a_nonoka_entry_without_checkpoint_dumps_as_before_so_its_run_ids_stay() -> None:
    plain = ENTRIES["nonoka"].model_validate({"preset": "nonoka"})
    assert not [k for k in plain.model_dump(mode="json") if k.startswith("checkpoint")]
    chosen = ENTRIES["nonoka"].model_validate({"preset": "nonoka", "summarize": True, "checkpoint": True})
    assert chosen.model_dump(mode="json")["checkpoint"] is True and params_of(chosen).checkpoint
