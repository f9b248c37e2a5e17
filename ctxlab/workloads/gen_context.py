"""Generators of context pressure: retrieval rounds, repeated and huge reads, parallel batches,
failing retries, long Chinese turns, images.

Invariants (see `ctxlab.workloads.generators` for the registry):
- Each generator is a pure function of its validated parameters and a seed, and every item
  draws from the generator derived from the seed and the item's path (`build.py`).
- Every size parameter is exact: `*_bytes` are UTF-8 bytes, `*_tokens` estimator tokens.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator

from ctxlab.core.messages.blocks import Part, TextBlock
from ctxlab.core.messages.tools import ToolSchema
from ctxlab.core.world.script import Script, ScriptedCall, ScriptedRound, ScriptedTurn
from ctxlab.workloads.build import (
    BankTool,
    GeneratorParams,
    call,
    call_path,
    error_text,
    final_text,
    schemas,
    sized_result,
    sized_text,
    source_path,
    tool_input,
    user_parts,
    zh_query,
)
from ctxlab.workloads.content import check_media_type
from ctxlab.workloads.filler import FillerKind, filler_tokens, image_block, item_rng
from ctxlab.workloads.limits import Bytes, Count, Tokens


class RetrievalParams(GeneratorParams):
    """ch08's book experiment: one turn of N rounds, each one `retrieve` call."""

    rounds: Count = Field(default=6, ge=1)
    result_bytes: Bytes = Field(
        default=6012, ge=0, description="Each result; with the 20-byte input, 6032 B a round."
    )
    kind: FillerKind = "prose"
    query: str = Field(default="batch {n}", description="Query of round n (1-based); `{n}` is replaced.")
    system_prompt_bytes: Bytes = Field(default=26, ge=0)
    user_bytes: Bytes = Field(default=27, ge=0)
    final: str = "Done."
    tool_description: str = "Retrieve documents."
    tool_parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object"})


def retrieval(p: RetrievalParams, seed: int) -> Script:
    """N rounds of one `retrieve` call whose result is `result_bytes` of filler."""
    rounds = tuple(
        ScriptedRound(
            calls=(
                call(
                    "retrieve",
                    {"query": p.query.replace("{n}", str(n + 1))},
                    sized_result(seed, f"{call_path(0, n)}.result", p.result_bytes, p.kind),
                ),
            )
        )
        for n in range(p.rounds)
    )
    turn = ScriptedTurn(user=user_parts(seed, 0, p.user_bytes), rounds=rounds, final=p.final)
    return Script(
        system_prompt=sized_text(seed, "system_prompt", p.system_prompt_bytes),
        tools=(ToolSchema.of("retrieve", p.tool_description, p.tool_parameters),),
        turns=(turn,),
    )


class RepeatedReadsParams(GeneratorParams):
    """Reads of the same few files through `Read`, `grep` and `bash` (microcompact's case)."""

    files: Count = Field(default=2, ge=1)
    turns: Count = Field(default=2, ge=1)
    reads_per_turn: Count = Field(default=6, ge=1)
    tools: tuple[Literal["Read", "grep", "bash"], ...] = Field(
        default=(
            "Read",
            "grep",
            "bash",
        ),
        min_length=1,
    )
    file_bytes: Bytes = Field(default=3000, ge=0, description="A `Read` or `cat` of a file.")
    grep_bytes: Bytes = Field(default=600, ge=0, description="A `grep` over a file.")
    system_prompt_bytes: Bytes = Field(default=400, ge=0)
    user_bytes: Bytes = Field(default=150, ge=0)
    final_bytes: Bytes = Field(default=120, ge=0)


def _read_call(p: RepeatedReadsParams, seed: int, k: int) -> ScriptedCall:
    tool = p.tools[k % len(p.tools)]
    f = (k // len(p.tools)) % p.files
    path = f"src/app/{source_path(item_rng(seed, f'files[{f}]')).rsplit('/', 1)[-1][:-3]}_{f}.py"
    if tool == "grep":
        text = sized_text(seed, f"files[{f}].grep", p.grep_bytes, "shell")
        return call("grep", {"pattern": "def ", "path": path}, (TextBlock(text=text),))
    content = (TextBlock(text=sized_text(seed, f"files[{f}]", p.file_bytes, "code")),)
    if tool == "bash":
        return call("bash", {"command": f"cat {path}"}, content)
    return call("Read", {"file_path": path}, content)


def repeated_reads(p: RepeatedReadsParams, seed: int) -> Script:
    """The same (tool, input) keys again and again; a key's result is identical every time."""
    turns = tuple(
        ScriptedTurn(
            user=user_parts(seed, t, p.user_bytes),
            rounds=tuple(
                ScriptedRound(calls=(_read_call(p, seed, t * p.reads_per_turn + j),))
                for j in range(p.reads_per_turn)
            ),
            final=final_text(seed, t, p.final_bytes),
        )
        for t in range(p.turns)
    )
    tools = schemas(*dict.fromkeys(p.tools))
    return Script(
        system_prompt=sized_text(seed, "system_prompt", p.system_prompt_bytes), tools=tools, turns=turns
    )


class HugeReadParams(GeneratorParams):
    """One `Read` whose result is `excess_tokens` above the tool-result limit."""

    tool_result_limit: Tokens = Field(default=50000, ge=1, description="Tokens; the strategy's limit.")
    excess_tokens: Tokens = Field(default=10000, ge=1)
    kind: FillerKind = "log"
    file_path: str = "logs/service.log"
    system_prompt_bytes: Bytes = Field(default=400, ge=0)
    user_bytes: Bytes = Field(default=160, ge=0)
    final_bytes: Bytes = Field(default=200, ge=0)


def huge_read(p: HugeReadParams, seed: int) -> Script:
    """One call whose result is exactly `tool_result_limit + excess_tokens` estimator tokens."""
    text = filler_tokens(
        p.kind, p.tool_result_limit + p.excess_tokens, item_rng(seed, f"{call_path(0, 0)}.result")
    )
    read = call("Read", {"file_path": p.file_path}, (TextBlock(text=text),))
    turn = ScriptedTurn(
        user=user_parts(seed, 0, p.user_bytes),
        rounds=(ScriptedRound(calls=(read,)),),
        final=final_text(seed, 0, p.final_bytes),
    )
    return Script(
        system_prompt=sized_text(seed, "system_prompt", p.system_prompt_bytes),
        tools=schemas("Read"),
        turns=(turn,),
    )


class ParallelBatchesParams(GeneratorParams):
    """Rounds that each call `fan_out` tools at once (up to 12)."""

    turns: Count = Field(default=1, ge=1)
    rounds: Count = Field(default=3, ge=1, description="Rounds per turn.")
    fan_out: int = Field(default=12, ge=1, le=12)
    tools: tuple[BankTool, ...] = Field(
        default=(
            "web_search",
            "fetch_page",
            "Read",
        ),
        min_length=1,
    )
    result_bytes: Bytes = Field(default=1200, ge=0)
    kind: FillerKind = "prose"
    text_bytes: Bytes = Field(default=80, ge=0, description="Assistant text before each batch.")
    system_prompt_bytes: Bytes = Field(default=400, ge=0)
    user_bytes: Bytes = Field(default=200, ge=0)
    final_bytes: Bytes = Field(default=300, ge=0)


def _batch(p: ParallelBatchesParams, seed: int, t: int, r: int) -> ScriptedRound:
    calls = tuple(
        call(
            tool := p.tools[c % len(p.tools)],
            tool_input(tool, item_rng(seed, f"{call_path(t, r, c)}.input")),
            sized_result(seed, f"{call_path(t, r, c)}.result", p.result_bytes, p.kind),
        )
        for c in range(p.fan_out)
    )
    return ScriptedRound(text=sized_text(seed, f"turns[{t}].rounds[{r}].text", p.text_bytes), calls=calls)


def parallel_batches(p: ParallelBatchesParams, seed: int) -> Script:
    """`rounds` batches of `fan_out` parallel calls per turn."""
    turns = tuple(
        ScriptedTurn(
            user=user_parts(seed, t, p.user_bytes),
            rounds=tuple(_batch(p, seed, t, r) for r in range(p.rounds)),
            final=final_text(seed, t, p.final_bytes),
        )
        for t in range(p.turns)
    )
    tools = schemas(*dict.fromkeys(p.tools))
    return Script(
        system_prompt=sized_text(seed, "system_prompt", p.system_prompt_bytes), tools=tools, turns=turns
    )


class FailingRetriesParams(GeneratorParams):
    """The same call failing with the same error several times in a row, per turn."""

    streaks: Count = Field(default=1, ge=1, description="Turns, each with its own failing call.")
    failures: Count = Field(default=3, ge=1, description="Identical failures in a row (the hint needs 3).")
    recover: bool = Field(default=True, description="End each streak with a successful call.")
    tool: BankTool = "bash"
    error: str | None = Field(default=None, description="The error text; None: a realistic one per streak.")
    retry_text: str | None = Field(default="Retrying.", description="Assistant text before each retry.")
    result_bytes: Bytes = Field(default=600, ge=0, description="The successful result.")
    system_prompt_bytes: Bytes = Field(default=400, ge=0)
    user_bytes: Bytes = Field(default=150, ge=0)
    final_bytes: Bytes = Field(default=120, ge=0)


def _streak(p: FailingRetriesParams, seed: int, t: int) -> tuple[ScriptedRound, ...]:
    arguments = tool_input(p.tool, item_rng(seed, f"turns[{t}].input"))
    error = p.error if p.error is not None else error_text(item_rng(seed, f"turns[{t}].error"))
    failing = call(p.tool, arguments, (TextBlock(text=error),), error=True)
    rounds = [ScriptedRound(text=p.retry_text if k else None, calls=(failing,)) for k in range(p.failures)]
    if p.recover:
        result = sized_result(seed, f"{call_path(t, p.failures)}.result", p.result_bytes, "shell")
        rounds.append(ScriptedRound(text=p.retry_text, calls=(call(p.tool, arguments, result),)))
    return tuple(rounds)


def failing_retries(p: FailingRetriesParams, seed: int) -> Script:
    """Each turn: `failures` identical failing calls, then (optionally) the call succeeding."""
    turns = tuple(
        ScriptedTurn(
            user=user_parts(seed, t, p.user_bytes),
            rounds=_streak(p, seed, t),
            final=final_text(seed, t, p.final_bytes),
        )
        for t in range(p.streaks)
    )
    return Script(
        system_prompt=sized_text(seed, "system_prompt", p.system_prompt_bytes),
        tools=schemas(p.tool),
        turns=turns,
    )


class ChineseTurnsParams(GeneratorParams):
    """Long Chinese user turns and results, sized in estimator tokens."""

    turns: Count = Field(default=3, ge=1)
    calls_per_turn: Count = Field(default=1, ge=0)
    user_tokens: Tokens = Field(default=1200, ge=0)
    result_tokens: Tokens = Field(default=1500, ge=0)
    final_tokens: Tokens = Field(default=150, ge=0)
    system_prompt_tokens: Tokens = Field(default=100, ge=0)


def _zh(seed: int, path: str, tokens: int) -> str:
    return filler_tokens("zh", tokens, item_rng(seed, path))


def _zh_turn(p: ChineseTurnsParams, seed: int, t: int) -> ScriptedTurn:
    rounds = tuple(
        ScriptedRound(
            calls=(
                call(
                    "web_search",
                    {"query": zh_query(item_rng(seed, f"{call_path(t, r)}.input"))},
                    (TextBlock(text=_zh(seed, f"{call_path(t, r)}.result", p.result_tokens)),),
                ),
            )
        )
        for r in range(p.calls_per_turn)
    )
    user = (TextBlock(text=_zh(seed, f"turns[{t}].user", p.user_tokens)),)
    return ScriptedTurn(user=user, rounds=rounds, final=_zh(seed, f"turns[{t}].final", p.final_tokens))


def chinese_turns(p: ChineseTurnsParams, seed: int) -> Script:
    """Turns whose user text, results and answers are Chinese prose of exact token counts."""
    return Script(
        system_prompt=_zh(seed, "system_prompt", p.system_prompt_tokens),
        tools=schemas("web_search") if p.calls_per_turn else (),
        turns=tuple(_zh_turn(p, seed, t) for t in range(p.turns)),
    )


class ImagesParams(GeneratorParams):
    """Images in user turns and tool results, more than `max_image_num` (5) in all by default."""

    turns: Count = Field(default=2, ge=1)
    user_images: Count = Field(default=2, ge=0, description="Spread over the turns in order.")
    result_images: Count = Field(
        default=6, ge=0, description="One per `screenshot` call, spread over the turns."
    )
    media_type: str = "image/png"
    source: Literal["url", "base64"] = "url"

    @field_validator("media_type")
    @classmethod
    def _media_type(cls, value: str) -> str:
        return check_media_type(value)

    caption_bytes: Bytes = Field(default=120, ge=0)
    system_prompt_bytes: Bytes = Field(default=300, ge=0)
    user_bytes: Bytes = Field(default=150, ge=0)
    final_bytes: Bytes = Field(default=120, ge=0)


def _imageuser_parts(p: ImagesParams, seed: int, t: int) -> tuple[Part, ...]:
    count = len(range(t, p.user_images, p.turns))
    text = TextBlock(text=sized_text(seed, f"turns[{t}].user.blocks[0]", p.user_bytes))
    images = tuple(
        image_block(p.media_type, seed=seed, path=f"turns[{t}].user.blocks[{k + 1}]", source=p.source)
        for k in range(count)
    )
    return (text, *images)


def _screenshot(p: ImagesParams, seed: int, t: int, r: int) -> ScriptedRound:
    at = call_path(t, r)
    caption = TextBlock(text=sized_text(seed, f"{at}.result.blocks[0]", p.caption_bytes))
    image = image_block(p.media_type, seed=seed, path=f"{at}.result.blocks[1]", source=p.source)
    arguments = tool_input("screenshot", item_rng(seed, f"{at}.input"))
    return ScriptedRound(calls=(call("screenshot", arguments, (caption, image)),))


def images(p: ImagesParams, seed: int) -> Script:
    """User turns with images, and `screenshot` calls whose results hold a caption and an image."""
    turns = tuple(
        ScriptedTurn(
            user=_imageuser_parts(p, seed, t),
            rounds=tuple(_screenshot(p, seed, t, r) for r in range(len(range(t, p.result_images, p.turns)))),
            final=final_text(seed, t, p.final_bytes),
        )
        for t in range(p.turns)
    )
    tools = schemas("screenshot") if p.result_images else ()
    return Script(
        system_prompt=sized_text(seed, "system_prompt", p.system_prompt_bytes), tools=tools, turns=turns
    )
