"""The book experiment of ch08 (section 8.5.1) reconstructed as a ctxlab script.

The book runs six retrieval rounds in one reply with a fake model, once with a 1,000,000-token
window (compression never triggers) and once with a 4,000-token window and trigger 0.8, and prints
the input tokens of every model call:

    (a) 144 -> 1652 -> 3160 -> 4668 -> 6176 -> 7684 -> 9192      2 context messages, summary 0
    (b) 144 -> 1652 -> 3160 -> 4936 -> 258 -> 1766 -> 3542 -> 258 -> 1766
                                                                   1 context message, summary 293

Every size below is fixed by those numbers (tokens = (bytes + 2) // 4, AgentScope's estimate):

- First call, 144 tokens = 574..577 B: system prompt 26 B + user message 27 B + the runtime-state
  hint 272 B (AgentScope's default template with the time and `UTC`; injection is on) + the tool
  list 250 B (`retrieve`, in the `[{"type": "function", ...}]` form AgentScope counts; 249..252 B
  fit) = 575 B.
- Each round adds 1508 tokens: the call input `{"query": "batch N"}` (20 B) + the result text
  (6012 B of ASCII) = 6032 B.
- (a) is then 575 + n x 6032 B for n = 0..6; its context is the user message and the one reply
  message (2 messages). In (b), 4668 >= 3200 (0.8 x 4000) compresses before the fourth call;
  3160 < 3200 did not.
- Summary request 4936 under the `messages` convention (the request alone, no tools): everything
  but the tool list (325 B) + three rounds + the compression prompt (1311 B with `{current_time}`
  replaced by `2026-01-01T00:00:00 (UTC)`, 1322 B) = 19743 B. AgentScope's own pre-flight estimate
  (with the 1528-B summary-schema tool) is 5318; as sent (plus the 180-B structured-output
  instruction) it is 5363.
- Every round's result (1500 tokens) alone exceeds the 400-token reserve, so the whole reply is
  compressed, user message included; the context keeps only the reply's empty usage carrier,
  into which the re-injected time hint (272 B) goes.
- 258 after compression: system 26 + summary 483 + hint 272 + tools 250 = 1031 B. The summary is
  the default template (166 ASCII characters) filled with fields of 95 CJK characters (3 B each)
  and 32 ASCII characters: 293 characters, 483 B. 482..485 B and 732..735 B for summary + tools
  are the ranges the numbers allow; the choices sit inside both.
- 1766 tokens = 1031 + 6032 = 7063 B. The fifth round reaches 3274 >= 3200 and compresses again: system +
  old summary + the carrier (hint, rounds 4 and 5) + compression prompt = 14167 B = 3542 tokens
  (3969 as sent). The fixed summarizer answers with the same fields, so the call after is 258
  again, and the sixth round 1766; that call gets the final answer.

Choices the numbers leave open, made here: the system prompt, user message and final answer
texts; the tool description; the filler text of the results (ASCII, looks like retrieved
passages, exact length; a scenario file may write each result as `{bytes: 6012}`, since only the
byte count enters any number above); the summary wording (Chinese, after the book's printed
summary). With injection off, a 280-B system prompt and a 45-B user message reproduce the numbers
too; this reconstruction keeps AgentScope's default injection on.

Settings: AgentScope's defaults (`texts: agentscope`, trigger 0.8, reserve 0.1, injection on, UTC,
clock frozen at 2026-01-01T00:00:00 UTC), **no workspace**: with an offloader the summary would
gain the "compressed context is offloaded" reminder, which the book's 293-character summary does
not have (and 258 would not hold), and no task tools (their schemas are 8360 B).
"""

from __future__ import annotations

from ctxlab.core.messages.blocks import TextBlock
from ctxlab.core.messages.tools import ToolSchema
from ctxlab.core.world.script import Script, ScriptedCall, ScriptedRound, ScriptedTurn, assign_call_ids
from tests.parity.spec import ParityConfig

SYSTEM_PROMPT = "You are a research helper."  # 26 B
USER_MESSAGE = "分六批检索并汇总。"  # 9 CJK characters, 27 B
FINAL_ANSWER = "六批资料已检索完毕，汇总如下。"
ROUNDS = 6
RESULT_BYTES = 6012  # + the 20-B call input = 6032 B per round

RETRIEVE = ToolSchema.of(  # 250 B as AgentScope's one-tool list
    "retrieve",
    "Retrieve passages matching a query.",
    {
        "type": "object",
        "properties": {"query": {"type": "string", "description": "What to search for."}},
        "required": ["query"],
    },
)

SUMMARY_FIELDS = {  # 95 CJK + 32 ASCII characters; rendered: 293 characters, 483 B
    "task_overview": "用户要求分 6 批检索资料，最后汇总成一份结果。",
    "current_state": "已用 retrieve 完成前 3 批检索，每批结果均已读过。",
    "important_discoveries": "每批结果约 1500 token，上下文增长很快，需尽早压缩。",
    "next_steps": "继续检索第 4-6 批，然后汇总全部结果。",
    "context_to_preserve": "用户偏好中文回答，结论要注明出处和来源。",
}

WINDOWS = (1_000_000, 4_000)
"""The book's two runs: (a) compression never triggers, (b) it triggers at 3200 tokens."""


def passages(batch: int, nbytes: int) -> str:
    """Retrieved passages for one batch: ASCII text of exactly `nbytes` bytes.

    >>> text = passages(1, 300)
    >>> len(text.encode()), text[:20]
    (300, '[batch 1, passage 1]')
    """
    lines = []
    size = 0
    number = 0
    while size < nbytes:
        number += 1
        line = (
            f"[batch {batch}, passage {number}] Source: archive/b{batch}-{number:03d}.txt. "
            f"The retrieved section discusses how the finding of passage {number} relates to the "
            "question, cites two earlier reports, and lists the figures the report relies on.\n"
        )
        lines.append(line)
        size += len(line)
    return "".join(lines)[:nbytes]


def retrieval_round(batch: int) -> ScriptedRound:
    """One round: a `retrieve` call for the batch and its 6012-B result."""
    call = ScriptedCall(
        tool="retrieve",
        input=f'{{"query": "batch {batch}"}}',
        result=(TextBlock(text=passages(batch, RESULT_BYTES)),),
    )
    return ScriptedRound(calls=(call,))


def ch08_script() -> Script:
    """The six-round retrieval reply, with call ids assigned."""
    turn = ScriptedTurn(
        user=(TextBlock(text=USER_MESSAGE),),
        rounds=tuple(retrieval_round(n) for n in range(1, ROUNDS + 1)),
        final=FINAL_ANSWER,
    )
    return assign_call_ids(Script(system_prompt=SYSTEM_PROMPT, tools=(RETRIEVE,), turns=(turn,)))


def ch08_workload(context_size: int) -> tuple[Script, ParityConfig]:
    """The script and configuration of the book's run with a `context_size` window."""
    config = ParityConfig(context_size=context_size, summary_fields=SUMMARY_FIELDS, workspace="none")
    return ch08_script(), config
