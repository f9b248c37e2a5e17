"""Independent conversions of each importer fixture's source to OpenAI chat messages.

Written from issue 19's mapping rules and each format's documentation, without the importers'
code: whole-file reads, no streaming, no shared helpers. The tests compare what `ctxlab import`
writes with these, message by message, once both are mapped into the lab's script.
"""

from __future__ import annotations

import ast
import base64
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

Wire = dict[str, Any]


def _load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _lines(path: Path) -> list[Any]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _call(call_id: str, name: str, arguments: Any) -> Wire:
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False)
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def swe_agent(path: Path) -> list[Wire]:
    out: list[Wire] = []
    observation_for = None
    for index, m in enumerate(_load(path)["history"]):
        role, text = m["role"], m["content"]
        if observation_for and role == "user":
            out.append({"role": "tool", "tool_call_id": observation_for, "content": text})
            observation_for = None
            continue
        observation_for = None
        calls = m.get("tool_calls")
        if isinstance(calls, str):
            calls = ast.literal_eval(calls)
        if role == "assistant" and calls:
            listed = [_call(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in calls]
            out.append({"role": "assistant", "content": text, "tool_calls": listed})
        elif role == "assistant" and (m.get("action") or "").strip():
            observation_for = f"step-{index}"
            action = _call(observation_for, "swe_agent_action", {"action": m["action"]})
            out.append({"role": "assistant", "content": m.get("thought", text), "tool_calls": [action]})
        elif role == "tool":
            ids = m["tool_call_ids"]
            ids = ast.literal_eval(ids) if isinstance(ids, str) else ids
            out.extend(
                {"role": "tool", "tool_call_id": i, "content": text if k == 0 else ""}
                for k, i in enumerate(ids)
            )
        else:
            out.append({"role": role, "content": text})
    return out


def mini_swe_agent(path: Path) -> list[Wire]:
    data = _load(path)
    messages = data["messages"] if isinstance(data, dict) else data
    out: list[Wire] = []
    items: list[Any] = []  # a Responses-API model's responses and outputs, in a row
    observation_for = None
    for index, m in enumerate(messages):
        if m.get("object") == "response" or m.get("type") == "function_call_output":
            items.extend(m["output"] if m.get("object") == "response" else [m])
            continue
        out.extend(_responses_items(items))
        items = []
        if m["role"] == "exit":
            continue
        text = m["content"]
        text = "".join(p["text"] for p in text) if isinstance(text, list) else text or ""
        if observation_for and m["role"] == "user":
            out.append({"role": "tool", "tool_call_id": observation_for, "content": text})
            observation_for = None
            continue
        observation_for = None
        found = re.findall(r"```(?:mswea_bash_command|bash)\s*\n(.*?)\n```", text, re.DOTALL)
        if m["role"] == "assistant" and m.get("tool_calls"):
            listed = [
                _call(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in m["tool_calls"]
            ]
            out.append({"role": "assistant", "content": text, "tool_calls": listed})
        elif m["role"] == "tool":
            out.append({"role": "tool", "tool_call_id": m["tool_call_id"], "content": text})
        elif m["role"] == "assistant" and found:
            observation_for = f"step-{index}"
            block = text.rindex("```", 0, text.rindex("```"))
            thought = (text[:block] + text[text.rindex("```") + 3 :]).strip()
            action = _call(observation_for, "swe_agent_action", {"action": found[-1]})
            out.append({"role": "assistant", "content": thought, "tool_calls": [action]})
        else:
            out.append({"role": m["role"], "content": text})
        if m["role"] == "assistant" and m.get("reasoning_content"):
            out[-1]["reasoning_content"] = m["reasoning_content"]
    return out + _responses_items(items)


def openhands_sdk(events: list[Any], instruction: str) -> list[Wire]:
    out: list[Wire] = [{"role": "user", "content": instruction}]
    responses: dict[str, Wire] = {}
    for e in events:
        if e["kind"] == "MessageEvent":
            text = "".join(p["text"] for p in e["llm_message"]["content"])
            if e["source"] == "agent":
                out.append({"role": "assistant", "content": text})
            elif out[1:]:  # the first user message is the instruction, already placed
                out.append({"role": "user", "content": text})
        elif e["kind"] == "ActionEvent":
            new = _call(e["tool_call_id"], e["tool_name"], e["tool_call"]["arguments"])
            if e["llm_response_id"] in responses:
                responses[e["llm_response_id"]]["tool_calls"].append(new)
                continue
            text = "".join(p["text"] for p in e["thought"])
            wire = responses[e["llm_response_id"]] = {
                "role": "assistant",
                "content": text,
                "tool_calls": [new],
            }
            out.append(wire)
        elif e["kind"] == "ObservationEvent":
            observation = e["observation"]
            output = observation["output"] if "output" in observation else observation.get("message", "")
            error = bool(observation.get("error"))
            out.append(
                {"role": "tool", "tool_call_id": e["tool_call_id"], "content": output, "is_error": error}
            )
    return out


def openhands(path: Path) -> list[Wire]:
    data = _lines(path)[0] if path.suffix == ".jsonl" else _load(path)
    events, instruction = (data["history"], data["instruction"]) if isinstance(data, dict) else (data, None)
    if events and "kind" in events[0]:
        return openhands_sdk(events, instruction)
    out: list[Wire] = []
    answered_responses: set[str] = set()
    for e in events:
        meta = e.get("tool_call_metadata")
        if "observation" in e:
            if meta:
                error = e["observation"] == "error"
                out.append(
                    {
                        "role": "tool",
                        "tool_call_id": meta["tool_call_id"],
                        "content": e["content"],
                        "is_error": error,
                    }
                )
            continue
        action = e["action"]
        if action == "system":
            out.append({"role": "system", "content": e["args"]["content"]})
        elif meta:
            response = meta["model_response"]
            if response["id"] in answered_responses:
                continue
            answered_responses.add(response["id"])
            message = response["choices"][0]["message"]
            listed = [
                _call(c["id"], c["function"]["name"], c["function"]["arguments"])
                for c in message["tool_calls"]
            ]
            wire = {"role": "assistant", "content": message["content"] or "", "tool_calls": listed}
            if message.get("reasoning_content"):
                wire["reasoning_content"] = message["reasoning_content"]
            out.append(wire)
        elif action == "message" and e["source"] == "user":
            out.append(
                {"role": "user", "content": instruction if instruction is not None else e["args"]["content"]}
            )
            instruction = None
        elif action == "message":
            out.append({"role": "assistant", "content": e["args"]["content"]})
    return out


def langgraph(path: Path) -> list[Wire]:
    roles = {"human": "user", "ai": "assistant", "tool": "tool", "system": "system"}
    out: list[Wire] = []
    for m in _load(path)["values"]["messages"]:
        body = m["content"]
        if isinstance(body, list):
            body = "".join(p["text"] for p in body if p.get("type") == "text")
        wire: Wire = {"role": roles[m["type"]], "content": body}
        if m["type"] == "ai" and m.get("tool_calls"):
            wire["tool_calls"] = [_call(c["id"], c["name"], c["args"]) for c in m["tool_calls"]]
        if m["type"] == "tool":
            wire["tool_call_id"] = m["tool_call_id"]
            wire["is_error"] = m.get("status") == "error"
        if m["type"] == "ai":
            wire["reasoning_content"] = m["additional_kwargs"].get("reasoning_content", "")
        out.append(wire)
    return out


def _anthropic_user(content: Any) -> list[Wire]:
    if isinstance(content, str):
        return [{"role": "user", "content": content}]
    out: list[Wire] = []
    parts: list[Wire] = []
    for b in content:
        if b["type"] == "tool_result":
            result = b["content"]
            if isinstance(result, list):
                result = "".join(x["text"] for x in result)
            error = b.get("is_error", False)
            out.append(
                {"role": "tool", "tool_call_id": b["tool_use_id"], "content": result, "is_error": error}
            )
        elif b["type"] == "text":
            parts.append({"type": "text", "text": b["text"]})
        elif b["type"] == "image":
            url = f"data:{b['source']['media_type']};base64,{b['source']['data']}"
            parts.append({"type": "image_url", "image_url": {"url": url}})
    if parts:
        out.append({"role": "user", "content": parts})
    return out


def claude_code(path: Path) -> list[Wire]:
    out: list[Wire] = []
    by_id: dict[str, Wire] = {}
    for line in _lines(path):
        if line["type"] not in {"user", "assistant"} or line["isSidechain"]:
            continue
        message = line["message"]
        if line["type"] == "user":
            out.extend(_anthropic_user(message["content"]))
            continue
        wire = by_id.get(message["id"])
        if wire is None:
            wire = by_id[message["id"]] = {"role": "assistant", "content": "", "tool_calls": []}
            out.append(wire)
        for b in message["content"]:
            if b["type"] == "thinking":
                wire["reasoning_content"] = wire.get("reasoning_content", "") + b["thinking"]
            elif b["type"] == "text":
                wire["content"] += b["text"]
            elif b["type"] == "tool_use":
                wire["tool_calls"].append(_call(b["id"], b["name"], b["input"]))
    return out


def _responses_items(items: list[Any]) -> list[Wire]:
    out: list[Wire] = []
    reasoning = ""
    for item in items:
        kind = item.get("type", "message")
        last = out[-1] if out else None
        if kind == "reasoning":
            reasoning = "\n\n".join(s["text"] for s in item["summary"])
        if kind == "message":
            parts = item["content"]
            if isinstance(parts, list):
                texts = [p for p in parts if p["type"] != "input_image"]
                images = [p for p in parts if p["type"] == "input_image"]
                if images:
                    parts = [{"type": "text", "text": p["text"]} for p in texts] + [
                        {"type": "image_url", "image_url": {"url": p["image_url"]}} for p in images
                    ]
                else:
                    parts = "".join(p["text"] for p in texts)
            role = {"developer": "system"}.get(item["role"], item["role"])
            out.append({"role": role, "content": parts})
        elif kind in {"function_call", "custom_tool_call"}:
            arguments = item["arguments"] if kind == "function_call" else {"input": item["input"]}
            new = _call(item["call_id"], item["name"], arguments)
            if last is not None and last["role"] == "assistant":
                last.setdefault("tool_calls", []).append(new)
            else:
                out.append(
                    {"role": "assistant", "content": "", "tool_calls": [new], "reasoning_content": reasoning}
                )
                reasoning = ""
        elif kind in {"function_call_output", "custom_tool_call_output"}:
            out.append({"role": "tool", "tool_call_id": item["call_id"], "content": item["output"]})
    return out


def codex(path: Path) -> list[Wire]:
    return _responses_items([line["payload"] for line in _lines(path) if line["type"] == "response_item"])


def anthropic_messages(path: Path) -> list[Wire]:
    last = _lines(path)[-1]
    request = last["request"]
    out: list[Wire] = [{"role": "system", "content": "".join(b["text"] for b in request["system"])}]
    for m in [*request["messages"], last["response"]]:
        if m["role"] == "user":
            out.extend(_anthropic_user(m["content"]))
        else:
            text = "".join(b["text"] for b in m["content"] if b["type"] == "text")
            thinking = "".join(b["thinking"] for b in m["content"] if b["type"] == "thinking")
            calls = [_call(b["id"], b["name"], b["input"]) for b in m["content"] if b["type"] == "tool_use"]
            extra = {"tool_calls": calls} if calls else {}
            out.append({"role": "assistant", "content": text, "reasoning_content": thinking, **extra})
    return out


def openai_responses(path: Path) -> list[Wire]:
    last = _lines(path)[-1]
    request = last["request"]
    items = [*request["input"], *last["response"]["output"]]
    return [{"role": "system", "content": request["instructions"]}, *_responses_items(items)]


def google_adk(path: Path) -> list[Wire]:
    """A single-agent session: events a compaction spans give way to its summary (a model turn at
    its end); a function response `{"result": text}` is the text, any other its JSON; thoughts
    are reasoning; images of a response follow its text."""
    doc = _load(path)
    events = doc["events"]

    def key(d: Any, snake: str) -> Any:
        head, *rest = snake.split("_")
        return d.get(snake, d.get(head + "".join(w.title() for w in rest)))

    spans = []
    for e in events:
        c = key(e["actions"], "compaction")
        if c:
            spans.append((key(c, "start_timestamp"), key(c, "end_timestamp"), key(c, "compacted_content")))
    timeline: list[tuple[float, Any]] = []
    for e in events:
        if key(e["actions"], "compaction") or any(a <= e["timestamp"] <= b for a, b, _ in spans):
            continue
        if e.get("content") and any(not p.get("thought") for p in e["content"]["parts"]):
            timeline.append((e["timestamp"], e["content"]))
    timeline += [(b, summary) for _, b, summary in spans]
    out: list[Wire] = []
    for _, content in sorted(timeline, key=lambda t: t[0]):
        out.extend(_adk_content(content, key))
    return out


def _adk_content(content: Any, key: Callable[[Any, str], Any]) -> list[Wire]:
    out: list[Wire] = []
    if content["role"] == "model":
        texts = [
            p["text"]
            for p in content["parts"]
            if "text" in p and p["text"] is not None and not p.get("thought")
        ]
        thoughts = "".join(p["text"] for p in content["parts"] if p.get("thought"))
        calls = [key(p, "function_call") for p in content["parts"] if key(p, "function_call")]
        wire: Wire = {"role": "assistant", "content": "\n".join(texts)}
        if calls:
            wire["tool_calls"] = [_call(c["id"], c["name"], c["args"]) for c in calls]
        if thoughts:
            wire["reasoning_content"] = thoughts
        return [wire]
    body: list[Wire] = []
    for p in content["parts"]:
        response = key(p, "function_response")
        blob = key(p, "inline_data")
        if response:
            r = response["response"]
            text = r["result"] if list(r) == ["result"] else json.dumps(r, ensure_ascii=False)
            images = [_adk_image(key(b, "inline_data")) for b in response.get("parts") or []]
            message: Wire = {"role": "tool", "tool_call_id": response["id"], "content": text}
            if images:
                message["content"] = [{"type": "text", "text": text}, *images]
            if "error" in r:
                message["is_error"] = True
            out.append(message)
        elif blob:
            body.append(_adk_image(blob))
        elif p.get("text") is not None:
            body.append({"type": "text", "text": p["text"]})
    if body:
        out.append(
            {
                "role": "user",
                "content": body[0]["text"] if len(body) == 1 and body[0]["type"] == "text" else body,
            }
        )
    return out


def _adk_image(blob: Any) -> Wire:
    mime = blob.get("mimeType", blob.get("mime_type"))
    return {"type": "image_url", "image_url": {"url": f"data:{mime};base64,{blob['data']}"}}


def tau_bench(path: Path) -> list[Wire]:
    out: list[Wire] = []
    for m in _load(path)[0]["traj"]:
        wire: Wire = {"role": m["role"], "content": m["content"] or ""}
        if m.get("tool_calls"):
            wire["tool_calls"] = [
                _call(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in m["tool_calls"]
            ]
        if m["role"] == "tool":
            wire["tool_call_id"] = m["tool_call_id"]
        out.append(wire)
    return _unstopped(out)


def _unstopped(out: list[Wire]) -> list[Wire]:
    """Without the user simulator's last message when it stops the run: the agent never got it."""
    stops = ("###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###")
    last = out[-1] if out else None
    if last is not None and last["role"] == "user" and any(s in str(last["content"]) for s in stops):
        return out[:-1]
    return out


def tau2(path: Path) -> list[Wire]:
    results = _load(path)
    out: list[Wire] = [{"role": "system", "content": results["info"]["environment_info"]["policy"]}]
    for m in results["simulations"][0]["messages"]:
        if m.get("requestor") == "user" or (m["role"] == "user" and not m["content"]):
            continue  # the user simulator's own tools: the agent never saw them
        if m["role"] == "tool":
            out.append(
                {"role": "tool", "tool_call_id": m["id"], "content": m["content"], "is_error": m["error"]}
            )
            continue
        wire = {"role": m["role"], "content": m["content"] or ""}
        if m.get("tool_calls"):
            written = (
                {
                    c["id"]: c["function"]["arguments"]
                    for c in ((m.get("raw_data") or {}).get("message") or {})["tool_calls"]
                }
                if m.get("raw_data")
                else {}
            )
            wire["tool_calls"] = [
                _call(c["id"], c["name"], written.get(c["id"], c["arguments"])) for c in m["tool_calls"]
            ]
        out.append(wire)
    return _unstopped(out)


def _agent_parts(parts: Any) -> Any:
    """Responses content parts as chat parts (a lone text part as its string)."""
    if isinstance(parts, str):
        return parts
    out = [
        {"type": "image_url", "image_url": {"url": p["image_url"]}}
        if p["type"] == "input_image"
        else {"type": "text", "text": p["text"]}
        for p in parts
    ]
    return out[0]["text"] if len(out) == 1 and out[0]["type"] == "text" else out


def openai_agents(path: Path) -> list[Wire]:
    """An OpenAI Agents SDK history: `to_input_list()` as a JSON list, or one item a line. No
    system prompt (the instructions are not among the items); a web search is not replayed."""
    text = path.read_text(encoding="utf-8")
    items = json.loads(text) if text.lstrip().startswith("[") else _lines(path)
    out: list[Wire] = []
    thinking = ""
    for item in items:
        kind = item.get("type", "message")
        last = out[-1] if out else None
        if kind == "reasoning":
            thinking = "".join(s["text"] for s in item["summary"])
        elif kind == "message" and item["role"] == "assistant":
            text = "".join(p["text"] for p in item["content"])
            out.append({"role": "assistant", "content": text, "reasoning_content": thinking})
            thinking = ""
        elif kind == "message":
            out.append({"role": item["role"], "content": _agent_parts(item["content"])})
        elif kind == "function_call":
            new = _call(item["call_id"], item["name"], item["arguments"])
            if last is not None and last["role"] == "assistant" and not thinking:
                last.setdefault("tool_calls", []).append(new)
            else:
                out.append(
                    {"role": "assistant", "content": "", "tool_calls": [new], "reasoning_content": thinking}
                )
                thinking = ""
        elif kind == "function_call_output":
            body = _agent_parts(item["output"])
            out.append({"role": "tool", "tool_call_id": item["call_id"], "content": body})
    return out


def _pa_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _pa_file(item: Any) -> Wire:
    url = item["url"] if item["kind"] == "image-url" else f"data:{item['media_type']};base64,{item['data']}"
    return {"type": "image_url", "image_url": {"url": url}}


def _pa_part(part: Any) -> Wire:
    """One request part of a pydantic-ai history, as pydantic-ai sends it to a chat model."""
    kind = part["part_kind"]
    if kind == "system-prompt":
        return {"role": "system", "content": part["content"]}
    if kind == "user-prompt":
        body = part["content"]
        if isinstance(body, list):
            body = [{"type": "text", "text": i} if isinstance(i, str) else _pa_file(i) for i in body]
        return {"role": "user", "content": body}
    if kind == "retry-feedback":
        tag = "validation_errors" if part["retry"]["cause"] == "validation_error" else "retry_feedback"
        errors = _pa_json(part["content"])
        text = f"Your previous response failed the application's validation (this is automated feedback, not a message from the user):\n<{tag}>\n{errors}\n</{tag}>"  # noqa: E501
        return {"role": "user", "content": text}
    body, failed = part["content"], part["outcome"] in ("failed", "retried")
    if isinstance(body, dict) and body.get("kind") == "binary":
        return {"role": "tool", "tool_call_id": part["tool_call_id"], "content": [_pa_file(body)]}
    text = body if isinstance(body, str) else _pa_json(body)
    wire: Wire = {"role": "tool", "tool_call_id": part["tool_call_id"], "content": text}
    if failed:
        wire["content"] = _pa_json({"error": body})
        wire["is_error"] = True
    return wire


def pydantic_ai(path: Path) -> list[Wire]:
    history = _load(path)
    requests = [m for m in history if m["kind"] == "request"]
    out: list[Wire] = []
    for message in history:
        if message["kind"] == "request":
            out.extend(_pa_part(p) for p in message["parts"])
            continue
        parts = message["parts"]
        wire: Wire = {
            "role": "assistant",
            "content": "\n\n".join(p["content"] for p in parts if p["part_kind"] == "text"),
        }
        calls = [
            _call(
                p["tool_call_id"],
                p["tool_name"],
                _pa_json(json.loads(p["args"]) if isinstance(p["args"], str) else p["args"]),
            )
            for p in parts
            if p["part_kind"] == "tool-call"
        ]
        if calls:
            wire["tool_calls"] = calls
        thinking = [p["content"] for p in parts if p["part_kind"] == "thinking"]
        if thinking:
            wire["reasoning_content"] = "\n\n".join(thinking)
        out.append(wire)
    leading = next(i for i, m in enumerate(out) if m["role"] != "system")
    return [*out[:leading], {"role": "system", "content": requests[0]["instructions"]}, *out[leading:]]


def _converse_image(image: Any) -> Wire:
    data = image["source"]["bytes"]
    data = data["data"] if isinstance(data, dict) else data  # strands' session files mark bytes
    return {"type": "image_url", "image_url": {"url": f"data:image/{image['format']};base64,{data}"}}


def _converse_result(result: Any) -> Wire:
    parts: list[Wire] = []
    for c in result["content"]:
        if "image" in c:
            parts.append(_converse_image(c["image"]))
            continue
        text = c["text"] if "text" in c else json.dumps(c["json"], ensure_ascii=False)
        if parts and parts[-1]["type"] == "text":
            parts[-1] = {"type": "text", "text": parts[-1]["text"] + "\n" + text}
        else:
            parts.append({"type": "text", "text": text})
    body: Any = parts[0]["text"] if len(parts) == 1 and parts[0]["type"] == "text" else parts
    error = result.get("status") == "error"
    return {"role": "tool", "tool_call_id": result["toolUseId"], "content": body, "is_error": error}


def _converse_message(m: Any) -> list[Wire]:
    blocks = m["content"]
    if m["role"] == "assistant":
        text = "".join(b["text"] for b in blocks if "text" in b)
        thinking = "\n\n".join(
            b["reasoningContent"]["reasoningText"]["text"] for b in blocks if "reasoningContent" in b
        )
        calls = [
            _call(b["toolUse"]["toolUseId"], b["toolUse"]["name"], b["toolUse"]["input"])
            for b in blocks
            if "toolUse" in b
        ]
        return [{"role": "assistant", "content": text, "reasoning_content": thinking, "tool_calls": calls}]
    out = [_converse_result(b["toolResult"]) for b in blocks if "toolResult" in b]
    parts = [
        {"type": "text", "text": b["text"]} if "text" in b else _converse_image(b["image"])
        for b in blocks
        if "text" in b or "image" in b
    ]
    if parts:
        out.append({"role": "user", "content": parts})
    return out


def bedrock_converse(path: Path) -> list[Wire]:
    """strands' session records (a JSON list) or a Converse request log (request, then response)."""
    if path.suffix == ".json":
        return [w for r in _load(path) for w in _converse_message(r["redact_message"] or r["message"])]
    request, response = _lines(path)[-2:]
    out: list[Wire] = [{"role": "system", "content": "".join(b["text"] for b in request["system"])}]
    for m in [*request["messages"], response["output"]["message"]]:
        out.extend(_converse_message(m))
    return out


def _agentscope_part(block: Any) -> Wire:
    if block["type"] == "text":
        return {"type": "text", "text": block["text"]}
    source = block["source"]
    url = source["url"] if source["type"] == "url" else f"data:{source['media_type']};base64,{source['data']}"
    return {"type": "image_url", "image_url": {"url": url}}


def _agentscope_body(blocks: Any) -> Any:
    if isinstance(blocks, str):
        return blocks
    parts = [_agentscope_part(b) for b in blocks]
    return parts[0]["text"] if len(parts) == 1 and parts[0]["type"] == "text" else parts


def agentscope(path: Path) -> list[Wire]:
    """An agent state: the summary a user message first (as the formatter sends it after the
    system prompt), then each message; an assistant's reply cut where a result or hint stands."""
    state = _load(path)
    out: list[Wire] = (
        [{"role": "user", "content": _agentscope_body(state["summary"])}] if state["summary"] else []
    )
    for m in state["context"]:
        if m["role"] != "assistant":
            out.append({"role": m["role"], "content": _agentscope_body(m["content"])})
            continue
        text, thinking, calls = "", "", []
        for b in [*m["content"], {"type": "end"}]:
            if b["type"] in ("tool_result", "hint", "end") and (text or thinking or calls):
                extra = {"tool_calls": calls} if calls else {}
                out.append({"role": "assistant", "content": text, "reasoning_content": thinking, **extra})
                text, thinking, calls = "", "", []
            if b["type"] == "text":
                text += b["text"]
            elif b["type"] == "thinking":
                thinking += b["thinking"]
            elif b["type"] == "tool_call":
                calls.append(_call(b["id"], b["name"], b["input"]))
            elif b["type"] == "hint":
                out.append({"role": "user", "content": _agentscope_body(b["hint"])})
            elif b["type"] == "tool_result":
                failed = b["state"] in ("error", "denied", "interrupted")
                out.append(
                    {
                        "role": "tool",
                        "tool_call_id": b["id"],
                        "content": _agentscope_body(b["output"]),
                        "is_error": failed,
                    }
                )
    return out


def _autogen_user(body: Any) -> Any:
    if isinstance(body, str):
        return body
    parts = [
        {"type": "text", "text": c}
        if isinstance(c, str)
        else {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{c['data']}"}}
        for c in body
    ]
    return parts[0]["text"] if len(parts) == 1 and parts[0]["type"] == "text" else parts


def autogen(path: Path) -> list[Wire]:
    """AutoGen saved state: the model context of an agent (of a team, its first participant's), or
    the messages listed alone; a call message's thought is its text, as AutoGen's clients send it."""
    value = _load(path)
    while isinstance(value, dict) and "llm_context" not in value:
        member = next(iter(value["agent_states"].values()))
        value = member.get("agent_state", member)
    out: list[Wire] = []
    for m in value["llm_context"]["messages"] if isinstance(value, dict) else value:
        if m["type"] == "SystemMessage":
            out.append({"role": "system", "content": m["content"]})
        elif m["type"] == "UserMessage":
            out.append({"role": "user", "content": _autogen_user(m["content"])})
        elif m["type"] == "AssistantMessage" and isinstance(m["content"], str):
            out.append(
                {"role": "assistant", "content": m["content"], "reasoning_content": m["thought"] or ""}
            )
        elif m["type"] == "AssistantMessage":
            called = [_call(c["id"], c["name"], c["arguments"]) for c in m["content"]]
            out.append({"role": "assistant", "content": m["thought"] or "", "tool_calls": called})
        else:
            out.extend(
                {
                    "role": "tool",
                    "tool_call_id": r["call_id"],
                    "content": r["content"],
                    "is_error": r["is_error"],
                }
                for r in m["content"]
            )
    return out


def _letta_text(m: Any) -> str:
    return "\n\n".join(c["text"] for c in m["content"] if c["type"] == "text")


def _letta_user(m: Any) -> Any:
    images = [
        {
            "type": "image_url",
            "image_url": {"url": f"data:{c['source']['media_type']};base64,{c['source']['data']}"},
        }
        for c in m["content"]
        if c["type"] == "image"
    ]
    return [{"type": "text", "text": _letta_text(m)}, *images] if images else _letta_text(m)


def _letta_tool(m: Any) -> list[Wire]:
    if not m["tool_returns"]:
        failed = json.loads(_letta_text(m))["status"] == "Failed"
        return [
            {"role": "tool", "tool_call_id": m["tool_call_id"], "content": _letta_text(m), "is_error": failed}
        ]
    return [
        {
            "role": "tool",
            "tool_call_id": r["tool_call_id"],
            "content": r["func_response"],
            "is_error": r["status"] == "error",
        }
        for r in m["tool_returns"]
    ]


def _letta_arguments(arguments: str, thoughts: str | None) -> str:
    """With `put_inner_thoughts_in_kwargs` on (the samples' calls and thoughts): `thinking` put
    first, the object written back indented by 2, non-ASCII kept."""
    return json.dumps({"thinking": thoughts, **json.loads(arguments)}, indent=2, ensure_ascii=False)


def letta(path: Path) -> list[Wire]:
    """A Letta agent file: its first agent's in-context messages in their listed order; a message of
    reasoning alone is left out, as Letta does not send it. An agent with
    `put_inner_thoughts_in_kwargs` on sends the text of a message with calls as a `thinking`
    argument of each call, the message's content null. An agent with reasoning entirely off
    (`put_inner_thoughts_in_kwargs` false, `enable_reasoner` false, `max_reasoning_tokens` 0 or
    unset) sends a message with calls without its text, Letta having scrubbed it."""
    agent = _load(path)["agents"][0]
    config = agent["llm_config"]
    in_kwargs = config["put_inner_thoughts_in_kwargs"]
    scrubbed = not in_kwargs and config["enable_reasoner"] is False and not config.get("max_reasoning_tokens")
    by_id = {m["id"]: m for m in agent["messages"]}
    out: list[Wire] = []
    for m in (by_id[i] for i in agent["in_context_message_ids"]):
        reasoning = "\n\n".join(c["reasoning"] for c in m["content"] if c["type"] == "reasoning")
        if m["role"] == "system":
            out.append({"role": "system", "content": _letta_text(m)})
        elif m["role"] == "user":
            out.append({"role": "user", "content": _letta_user(m)})
        elif m["role"] == "tool":
            out.extend(_letta_tool(m))
        elif m["tool_calls"]:
            called = [
                _call(
                    c["id"],
                    c["function"]["name"],
                    _letta_arguments(c["function"]["arguments"], _letta_text(m))
                    if in_kwargs
                    else c["function"]["arguments"],
                )
                for c in m["tool_calls"]
            ]
            out.append(
                {
                    "role": "assistant",
                    "content": None if in_kwargs else "" if scrubbed else _letta_text(m),
                    "tool_calls": called,
                    "reasoning_content": reasoning,
                }
            )
        elif _letta_text(m):
            out.append({"role": "assistant", "content": _letta_text(m), "reasoning_content": reasoning})
    return out


def _llamaindex_message(m: Any) -> Wire:
    blocks, extra = m["blocks"], m["additional_kwargs"]
    kinds = [b["block_type"] for b in blocks]
    text = "".join(b["text"] for b in blocks if b["block_type"] == "text")
    if m["role"] == "tool":
        return {"role": "tool", "tool_call_id": extra["tool_call_id"], "content": text}
    if m["role"] == "user":
        urls = [
            f"data:{b['image_mimetype']};base64,{b['image']}" for b in blocks if b["block_type"] == "image"
        ]
        parts = [{"type": "text", "text": b["text"]} for b in blocks if b["block_type"] == "text"]
        images = [{"type": "image_url", "image_url": {"url": u}} for u in urls]
        return {"role": "user", "content": parts + images if images else text}
    calls = [
        _call(b["tool_call_id"], b["tool_name"], b["tool_kwargs"])
        for b in blocks
        if b["block_type"] == "tool_call"
    ]
    thinking = "\n".join(b["content"] for b in blocks if b["block_type"] == "thinking")
    wire: Wire = {"role": "assistant", "content": text, "reasoning_content": thinking}
    return {**wire, "tool_calls": calls} if "tool_call" in kinds else wire


def _history_reasoning(m: Any) -> str:
    said = [m.get("reasoning_content") or ""]
    for b in m["content"] if isinstance(m["content"], list) else []:
        if b["type"] == "thinking" or (b["type"] == "reasoning" and "text" in b):
            said.append(b.get("thinking", b.get("text", "")))
    return "\n\n".join(s for s in said if s)


def _history_part(b: Any) -> Wire:
    if b["type"] == "text":
        return {"type": "text", "text": b["text"]}
    url = f"data:{b['source']['media_type']};base64,{b['source']['data']}"
    return {"type": "image_url", "image_url": {"url": url}}


def _history_user(content: Any) -> list[Wire]:
    """Results first (their text, or their parts when one is an image), then text and images."""
    if isinstance(content, str):
        return [{"role": "user", "content": content}]
    out: list[Wire] = []
    for b in (b for b in content if b["type"] == "tool_result"):
        result = b["content"]
        if isinstance(result, list):
            images = any(x["type"] == "image" for x in result)
            result = [_history_part(x) for x in result] if images else "".join(x["text"] for x in result)
        out.append(
            {
                "role": "tool",
                "tool_call_id": b["tool_use_id"],
                "content": result,
                "is_error": b.get("is_error", False),
            }
        )
    parts = [_history_part(b) for b in content if b["type"] in {"text", "image"}]
    if parts:
        out.append({"role": "user", "content": parts})
    return out


def anthropic_history(path: Path) -> list[Wire]:
    """What Cline or Roo Code sends from its history: from the last summary on (Roo Code), less
    the messages a truncation marker of that range hides, with no system prompt."""
    history = _load(path)
    summaries = [i for i, m in enumerate(history) if m.get("isSummary")]
    start = summaries[-1] if summaries else 0
    markers = {m["truncationId"] for m in history[start:] if m.get("isTruncationMarker")}
    out: list[Wire] = []
    for m in history[start:]:
        if m.get("truncationParent") in markers:
            continue
        if m["role"] == "user":
            out.extend(_history_user(m["content"]))
            continue
        blocks = m["content"] if isinstance(m["content"], list) else [{"type": "text", "text": m["content"]}]
        text = "".join(b["text"] for b in blocks if b["type"] == "text")
        calls = [_call(b["id"], b["name"], b["input"]) for b in blocks if b["type"] == "tool_use"]
        extra = {"tool_calls": calls} if calls else {}
        out.append(
            {"role": "assistant", "content": text, "reasoning_content": _history_reasoning(m), **extra}
        )
    return out


def llamaindex(path: Path) -> list[Wire]:
    """A chat store's first key (session 0), or a list of messages: each as LlamaIndex's OpenAI
    integration sends it (the thinking kept as reasoning)."""
    data = _load(path)
    messages = next(iter(data["store"].values())) if isinstance(data, dict) else data
    return [_llamaindex_message(m) for m in messages]


def gemini_cli(path: Path) -> list[Wire]:
    """A Gemini CLI session (its records replayed as the CLI resumes them: shown records and
    commands left out, each `gemini` record's tool results after it, a result recorded twice read
    once), a checkpoint or a request: model contents are assistant messages (texts joined as
    written, thoughts reasoning), function responses tool messages (`output` / `error` text),
    media beside them in the last result; calls without ids are named by content and part."""
    try:
        docs = [_load(path)]
    except json.JSONDecodeError:
        docs = _lines(path)
    head, out = docs[0], []
    if isinstance(head, dict) and "sessionId" in head:
        contents = _gemini_session(head.get("messages", []), docs[1:])
    else:
        request = head if isinstance(head, dict) and "contents" in head else None
        history = request["contents"] if request else head if isinstance(head, list) else head["history"]
        contents = [(c["role"], c["parts"], f"content{i}") for i, c in enumerate(history)]
        if request and request.get("systemInstruction"):
            out.append(
                {
                    "role": "system",
                    "content": "".join(p["text"] for p in request["systemInstruction"]["parts"]),
                }
            )
    answered: set[str] = set()
    open_calls: list[tuple[str, str]] = []
    for role, parts, key in contents:
        if role == "model":
            wire: Wire = {
                "role": "assistant",
                "content": "".join(p["text"] for p in parts if "text" in p and not p.get("thought")),
            }
            calls = []
            for i, p in enumerate(parts):
                if "functionCall" in p:
                    fc = p["functionCall"]
                    calls.append(_call(fc.get("id") or f"{key}-{i}", fc["name"], fc.get("args") or {}))
                    open_calls.append((calls[-1]["id"], fc["name"]))
            if calls:
                wire["tool_calls"] = calls
            thoughts = "".join(p["text"] for p in parts if p.get("thought"))
            if thoughts:
                wire["reasoning_content"] = thoughts
            out.append(wire)
            continue
        results: list[Wire] = []
        body: list[Wire] = []
        for p in parts:
            fr = p.get("functionResponse")
            if fr is None:
                blob = p.get("inlineData")
                body.append(_adk_image(blob) if blob else {"type": "text", "text": p["text"]})
                continue
            if fr.get("id") in answered:
                continue
            match = next(c for c in open_calls if (c[0] == fr["id"] if fr.get("id") else c[1] == fr["name"]))
            open_calls.remove(match)
            answered.add(match[0])
            r = fr["response"]
            said = next(iter(r.values())) if list(r) in (["output"], ["error"]) else json.dumps(r)
            images = [_adk_image(b["inlineData"]) for b in fr.get("parts") or []]
            message: Wire = {"role": "tool", "tool_call_id": match[0], "content": said}
            if images:
                message["content"] = [{"type": "text", "text": said}, *images]
            if "error" in r:
                message["is_error"] = True
            results.append(message)
        if results and body:
            last = results[-1]["content"]
            results[-1]["content"] = [
                *([{"type": "text", "text": last}] if isinstance(last, str) else last),
                *body,
            ]
        elif body:
            only = len(body) == 1 and body[0]["type"] == "text"
            out.append({"role": "user", "content": body[0]["text"] if only else body})
        out.extend(results)
    return out


def _gemini_session(messages: list[Any], lines: list[Any]) -> list[tuple[str, list[Any], str]]:
    records: dict[str, Any] = {m["id"]: m for m in messages}
    for line in lines:
        if "$rewindTo" in line:
            ids = list(records)
            for gone in ids[ids.index(line["$rewindTo"]) :]:
                del records[gone]
        elif "id" in line:
            records[line["id"]] = line
    out: list[tuple[str, list[Any], str]] = []
    for r in records.values():
        c = r["content"]
        parts = [{"text": c}] if isinstance(c, str) and c else c if isinstance(c, list) else []
        if r["type"] == "user":
            said = "".join(p.get("text", "[part]") for p in parts).strip()
            if said and not said.startswith(("/", "?", "<session_context>", "<hook_context>")):
                out.append(("user", parts, r["id"]))
        elif r["type"] == "gemini":
            if not any("functionCall" in p or p.get("thought") for p in parts):
                thoughts = [
                    {
                        "text": f"**{t['subject']}** {t['description']}"
                        if t["subject"]
                        else t["description"],
                        "thought": True,
                    }
                    for t in r.get("thoughts") or []
                ]
                calls = [
                    {"functionCall": {"id": t["id"], "name": t["name"], "args": t["args"]}}
                    for t in r.get("toolCalls") or []
                ]
                parts = thoughts + parts + calls
            out.append(("model", parts, r["id"]))
            results = []
            for t in r.get("toolCalls") or []:
                if isinstance(t.get("result"), str):
                    results.append(
                        {
                            "functionResponse": {
                                "id": t["id"],
                                "name": t["name"],
                                "response": {"output": t["result"]},
                            }
                        }
                    )
                elif t.get("result"):
                    results.extend(t["result"])
            if results:
                out.append(("user", results, r["id"] + "_response"))
    return out


def _js(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _sdk_steps(parts: list[Any]) -> list[list[Any]]:
    steps: list[list[Any]] = [[]]
    for p in parts:
        if p["type"] == "step-start":
            steps.append([])
        else:
            steps[-1].append(p)
    return [s for s in steps if s]


def _sdk_ui(m: Any) -> list[Wire]:
    """A UIMessage as the SDK sends it: a user's text and images, an assistant's steps each a
    message and its results (objects as compact JSON, an `output-error` part an error)."""
    if m["role"] == "user":
        parts = [
            {"type": "text", "text": p["text"]}
            if p["type"] == "text"
            else {"type": "image_url", "image_url": {"url": p["url"]}}
            for p in m["parts"]
            if p["type"] in {"text", "file"}
        ]
        return [{"role": "user", "content": parts[0]["text"] if len(parts) == 1 else parts}]
    out: list[Wire] = []
    for step in _sdk_steps(m["parts"]):
        tools = [p for p in step if p["type"].startswith("tool-") or p["type"] == "dynamic-tool"]
        calls = [_call(p["toolCallId"], p.get("toolName", p["type"][5:]), _js(p["input"])) for p in tools]
        reply: Wire = {
            "role": "assistant",
            "content": "".join(p["text"] for p in step if p["type"] == "text"),
            "reasoning_content": "\n".join(p["text"] for p in step if p["type"] == "reasoning"),
        }
        out.append({**reply, "tool_calls": calls} if calls else reply)
        for p in tools:
            failed = p["state"] == "output-error"
            said = p["errorText"] if failed else p["output"]
            body = said if isinstance(said, str) else _js(said)
            out.append({"role": "tool", "tool_call_id": p["toolCallId"], "content": body, "is_error": failed})
    return out


def _sdk_model(m: Any) -> list[Wire]:
    """A ModelMessage as the OpenAI chat provider sends it (reasoning kept apart)."""
    body = m["content"]
    if isinstance(body, str) or m["role"] == "system":
        return [{"role": m["role"], "content": body}]
    if m["role"] == "tool":
        return [
            {
                "role": "tool",
                "tool_call_id": r["toolCallId"],
                "content": r["output"]["value"]
                if "text" in r["output"]["type"]
                else _js(r["output"]["value"]),
                "is_error": r["output"]["type"].startswith("error"),
            }
            for r in body
        ]
    return _model_parts(m["role"], body, media="mediaType", arguments="input")


def _model_parts(role: str, body: list[Any], *, media: str, arguments: str) -> list[Wire]:
    """A user or assistant model message's parts as the OpenAI chat provider sends them (an
    image's type under `media`, a call's arguments under `arguments`)."""
    if role == "user":
        parts = [
            {"type": "text", "text": p["text"]}
            if p["type"] == "text"
            else {"type": "image_url", "image_url": {"url": f"data:{p[media]};base64,{p['image']}"}}
            for p in body
        ]
        return [{"role": "user", "content": parts}]
    calls = [
        _call(p["toolCallId"], p["toolName"], _js(p[arguments])) for p in body if p["type"] == "tool-call"
    ]
    reply = {
        "role": "assistant",
        "content": "".join(p["text"] for p in body if p["type"] == "text"),
        "reasoning_content": "\n".join(p["text"] for p in body if p["type"] == "reasoning"),
    }
    return [{**reply, "tool_calls": calls} if calls else reply]


def _sdk4_user(m: Any) -> Wire:
    """An AI SDK 4 user Message: its text parts, then its attachments (images as data URLs of
    their own type, text files as their text)."""
    said: list[Wire] = [{"type": "text", "text": p["text"]} for p in m["parts"] if p["type"] == "text"]
    for a in m.get("experimental_attachments", []):
        if not a["url"].startswith("data:"):
            said.append({"type": "image_url", "image_url": {"url": a["url"]}})
            continue
        payload = a["url"].split(",", 1)[1]
        if a["contentType"].startswith("text/"):
            said.append({"type": "text", "text": base64.b64decode(payload).decode()})
        else:
            said.append(
                {"type": "image_url", "image_url": {"url": f"data:{a['contentType']};base64,{payload}"}}
            )
    return {"role": "user", "content": said[0]["text"] if len(said) == 1 else said}


def _sdk4_assistant(m: Any) -> list[Wire]:
    """An AI SDK 4 assistant Message as `appendResponseMessages` writes it: one request step
    between `step-start` parts (which the SDK's own cut by `toolInvocation.step` agrees with);
    results as JSON, strings quoted."""
    out: list[Wire] = []
    for step in _sdk_steps(m["parts"]):
        invocations = [p["toolInvocation"] for p in step if p["type"] == "tool-invocation"]
        thoughts = [
            d["text"] for p in step if p["type"] == "reasoning" for d in p["details"] if d["type"] == "text"
        ]
        reply: Wire = {
            "role": "assistant",
            "content": "".join(p["text"] for p in step if p["type"] == "text"),
            "reasoning_content": "\n".join(thoughts),
        }
        if invocations:
            reply["tool_calls"] = [_call(i["toolCallId"], i["toolName"], _js(i["args"])) for i in invocations]
        out.append(reply)
        out += [
            {"role": "tool", "tool_call_id": i["toolCallId"], "content": _js(i["result"])}
            for i in invocations
        ]
    return out


def _sdk4_core(m: Any) -> list[Wire]:
    """An AI SDK 4 CoreMessage as the 1.x OpenAI provider sends it."""
    body = m["content"]
    if isinstance(body, str):
        return [{"role": m["role"], "content": body}]
    if m["role"] == "tool":
        return [{"role": "tool", "tool_call_id": r["toolCallId"], "content": _js(r["result"])} for r in body]
    return _model_parts(m["role"], body, media="mimeType", arguments="args")


def _sdk4(m: Any) -> list[Wire]:
    if "parts" not in m:
        return _sdk4_core(m)
    return [_sdk4_user(m)] if m["role"] == "user" else _sdk4_assistant(m)


def ai_sdk(path: Path) -> list[Wire]:
    """A Vercel AI SDK history: UIMessages (with `parts`) or ModelMessages; or AI SDK 4's
    Messages (`content` beside `parts`) or CoreMessages (`args`, `result`)."""
    messages = _load(path)
    if any(("content" in m and "parts" in m) or "args" in json.dumps(m) for m in messages):
        return [w for m in messages for w in _sdk4(m)]
    return [w for m in messages for w in (_sdk_ui(m) if "parts" in m else _sdk_model(m))]


def _oc_start(messages: list[Any]) -> int:
    done = {m["info"]["parentID"] for m in messages if m["info"].get("summary") and m["info"].get("finish")}
    cuts = [i for i, m in enumerate(messages) if m["info"]["id"] in done]
    cuts = [i for i in cuts if any(p["type"] == "compaction" for p in messages[i]["parts"])]
    return cuts[-1] if cuts else 0


def _oc_result(state: Any) -> tuple[str, bool]:
    if state["status"] == "completed":
        return (
            "[Old tool result content cleared]" if state["time"].get("compacted") else state["output"]
        ), False
    return (state["error"] if state["status"] == "error" else "[Tool execution was interrupted]"), True


def _oc_assistant(parts: list[Any]) -> list[Wire]:
    out: list[Wire] = []
    steps: list[list[Any]] = [[]]
    for p in parts:
        if p["type"] == "step-start":
            steps.append([])
        else:
            steps[-1].append(p)
    for step in steps:
        text = "".join(p["text"] for p in step if p["type"] == "text")
        thought = "\n".join(p["text"] for p in step if p["type"] == "reasoning")
        tools = [p for p in step if p["type"] == "tool"]
        if not (text or thought or tools):
            continue
        reply: Wire = {"role": "assistant", "content": text}
        if tools:
            reply["tool_calls"] = [_call(p["callID"], p["tool"], _js(p["state"]["input"])) for p in tools]
        if thought:
            reply["reasoning_content"] = thought
        out.append(reply)
        for p in tools:
            body, failed = _oc_result(p["state"])
            out.append(
                {
                    "role": "tool",
                    "tool_call_id": p["callID"],
                    "content": body,
                    **({"is_error": True} if failed else {}),
                }
            )
    images = [a["url"] for p in parts if p["type"] == "tool" for a in p["state"].get("attachments", [])]
    if images:
        said = [{"type": "text", "text": "Attached image(s) from tool result:"}]
        out.append(
            {
                "role": "user",
                "content": said + [{"type": "image_url", "image_url": {"url": u}} for u in images],
            }
        )
    return out


def opencode(path: Path) -> list[Wire]:
    """An OpenCode export: from the newest completed compaction on, failed assistant messages
    left out (an aborted one with calls kept), steps split at `step-start`."""
    messages = _load(path)["messages"]
    out: list[Wire] = []
    for m in messages[_oc_start(messages) :]:
        info, parts = m["info"], m["parts"]
        if info["role"] == "assistant":
            error = info.get("error")
            if not error or (
                error["name"] == "MessageAbortedError" and any(p["type"] == "tool" for p in parts)
            ):
                out += _oc_assistant(parts)
            continue
        said: list[Wire] = []
        for p in parts:
            if p["type"] == "text":
                said.append({"type": "text", "text": p["text"]})
            elif p["type"] == "compaction":
                said.append({"type": "text", "text": "What did we do so far?"})
            elif p["type"] == "file" and p["mime"].startswith("image/"):
                said.append({"type": "image_url", "image_url": {"url": p["url"]}})
        out.append({"role": "user", "content": said[0]["text"] if len(said) == 1 else said})
    return out


CONVERSIONS: dict[str, Callable[[Path], list[Wire]]] = {
    "swe-agent": swe_agent,
    "mini-swe-agent": mini_swe_agent,
    "openhands": openhands,
    "langgraph": langgraph,
    "google-adk": google_adk,
    "gemini-cli": gemini_cli,
    "opencode": opencode,
    "tau-bench": tau_bench,
    "tau2": tau2,
    "bedrock-converse": bedrock_converse,
    "claude-code": claude_code,
    "codex": codex,
    "anthropic-messages": anthropic_messages,
    "anthropic-history": anthropic_history,
    "openai-responses": openai_responses,
    "openai-agents": openai_agents,
    "pydantic-ai": pydantic_ai,
    "agentscope": agentscope,
    "autogen": autogen,
    "letta": letta,
    "llamaindex": llamaindex,
    "ai-sdk": ai_sdk,
}
