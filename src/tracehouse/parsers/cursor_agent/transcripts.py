"""The Cursor agent's transcript files, in every variant, read into one shape (README.md here).

A transcript is a list of turns; a turn is a user prompt and the replies after it; a reply has
text, thinking and tool calls (a name, its input, and its result when the variant keeps one).
Variants: `.txt` (headers `user:`/`assistant:`, `[Thinking]`, `[Tool call] Name` with indented
`key: value` arguments, `[Tool result] Name`), `.json` (an array of `{role, text, toolCalls}` and
`{role: "tool", toolResult}`), and `.jsonl` (one `{role, message: {content: [blocks]}}` per line,
`text` and `tool_use` blocks). JSONL is split on `\\n` only: strings hold U+2029.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from tracehouse.parsers.kit.jsonl import LineError, decode_line
from tracehouse.parsers.kit.untrusted import decode_json, items, mapping, place

HEADER = re.compile(r"^(user|assistant|A|User|Assistant|Human):\s*$")
TOOL_CALL = re.compile(r"^\[Tool call\] ([\w.:@/-]+)(.*)$")
TOOL_RESULT = re.compile(r"^\[Tool result\] ([\w.:@/-]+)\s*$")
ARGUMENT = re.compile(r"^  ([\w.-]+): ?(.*)$")
THINK = re.compile(r"<think>(.*?)(?:</think>|$)", re.S)
# How much each variant holds, for the merge of twins: structured with results and arguments,
# structured with arguments, text with arguments, text alone.
RANK = {"json": 3, "nested": 2, "txt": 1, "flat": 0, "store": 4}


@dataclass
class Tool:
    name: str
    input: Any = None
    id: str | None = None  # the store's toolCallId; transcripts have none
    result: Any = None
    has_result: bool = False


@dataclass
class Reply:
    role: str  # user or assistant
    text: str = ""
    thinking: str = ""
    tools: list[Tool] = field(default_factory=list)


@dataclass
class Transcript:
    form: str  # txt, json, flat, nested, or store (`store.py`)
    turns: list[list[Reply]] = field(default_factory=list)  # each: the prompt, then replies
    problems: list[tuple[str, str]] = field(default_factory=list)
    accounting: Counter[str] = field(default_factory=Counter)
    system: str | None = None  # the system prompt, where the variant keeps it

    def add(self, reply: Reply) -> None:
        if reply.role == "user" or not self.turns:
            self.turns.append([])
        self.turns[-1].append(reply)


def read_jsonl(data: bytes, form: str) -> Transcript:
    out = Transcript(form)
    for number, line in enumerate(data.split(b"\n"), 1):
        if not line.strip():
            continue
        try:  # invalid UTF-8 and a lone surrogate's escape are read as any JSONL line's are
            record = decode_line(line)
            role = record.get("role")
            if role is None and record.get("type"):  # `turn_ended` and other markers
                out.accounting[f"marker.{record['type']}"] += 1
                continue
            reply = Reply(str(role))
            for block in record["message"]["content"]:
                kind = block.get("type")
                out.accounting[f"block.{kind}"] += 1
                if kind == "text":
                    _add_text(reply, str(block.get("text") or ""))
                elif kind == "tool_use":
                    reply.tools.append(Tool(str(block.get("name") or "tool"), block.get("input")))
            out.add(reply)
            out.accounting[f"line.{role}"] += 1
        except (LineError, TypeError, KeyError, AttributeError) as exc:
            out.problems.append((f"line {number}", f"not a transcript record ({exc})"))
    return out


def read_json(data: bytes) -> Transcript:
    out = Transcript("json")
    records, problem = decode_json(data, list)
    if problem is not None:
        out.problems.append((place(problem, "document"), f"not a transcript ({problem})"))
        return out
    for index, record in enumerate(records):
        try:
            role = str(record["role"])
            out.accounting[f"record.{role}"] += 1
            if role == "tool":
                result = mapping(record.get("toolResult"))
                _attach_result(out, str(result.get("toolName") or ""), result.get("result"))
                continue
            reply = Reply(role)
            _add_text(reply, str(record.get("text") or ""))
            for call in items(record.get("toolCalls")):
                reply.tools.append(Tool(str(call.get("toolName") or "tool"), call.get("args")))
            out.add(reply)
        except (TypeError, KeyError, AttributeError) as exc:
            out.problems.append((f"record {index}", f"not a transcript record ({exc})"))
    return out


def read_txt(data: bytes) -> Transcript:
    out = Transcript("txt")
    reply: Reply | None = None
    mode = "text"  # where the lines of the current segment go
    lines: list[str] = []
    tool: Tool | None = None

    def flush() -> None:
        nonlocal lines
        text = "\n".join(lines).strip("\n")
        if reply is not None and text:
            if mode == "thinking":
                reply.thinking = "\n\n".join(filter(None, (reply.thinking, text)))
            elif mode == "result" and tool is not None:
                tool.result = text
            elif mode == "text":
                reply.text = "\n\n".join(filter(None, (reply.text, text)))
        if mode == "arguments" and tool is not None and isinstance(tool.input, dict):
            tool.input = {k: v.rstrip() if isinstance(v, str) else v for k, v in tool.input.items()}
        lines = []

    for raw in data.decode("utf-8", "replace").split("\n"):
        line = raw.rstrip("\r")
        if (header := HEADER.match(line)) is not None:
            flush()
            role = "user" if header.group(1).lower() in ("user", "human") else "assistant"
            reply, mode, tool = Reply(role), "text", None
            out.add(reply)
            out.accounting[f"block.{role}"] += 1
        elif reply is None:
            continue  # nothing before the first header
        elif line.startswith("[Thinking]"):
            flush()
            mode, tool = "thinking", None
            lines.append(line.removeprefix("[Thinking]").lstrip())
            out.accounting["thinking"] += 1
        elif (call := TOOL_CALL.match(line)) is not None:
            flush()
            tool, mode = Tool(call.group(1), {}), "arguments"
            if call.group(2).strip():  # an argument written on the same line (ApplyPatch)
                tool.input = {"input": call.group(2)}
            reply.tools.append(tool)
            out.accounting["tool call"] += 1
        elif (result := TOOL_RESULT.match(line)) is not None:
            flush()
            tool, mode = _attach_result(out, result.group(1), None), "result"
            out.accounting["tool result"] += 1
        elif mode == "arguments" and tool is not None:
            _argument(tool, line)
        else:
            lines.append(line)
    flush()
    return out


def merge(transcripts: list[Transcript]) -> Transcript:
    """Twins of one conversation (a `.txt` beside a `.jsonl` or `.json`) as one: each turn from
    the variant that holds most of it, a turn only one of them has from that one."""
    ranked = sorted(transcripts, key=lambda t: -RANK[t.form])
    out = Transcript("+".join(t.form for t in ranked))
    for transcript in ranked:
        out.problems += transcript.problems
        out.accounting.update(transcript.accounting)
    for index in range(max((len(t.turns) for t in ranked), default=0)):
        out.turns.append(next(t.turns[index] for t in ranked if index < len(t.turns)))
    return out


def _add_text(reply: Reply, text: str) -> None:
    """Text, with `<think>` sections (the `.json` variant's thinking) taken out."""
    thoughts = [m.strip() for m in THINK.findall(text) if m.strip()]
    if thoughts:
        reply.thinking = "\n\n".join(filter(None, (reply.thinking, *thoughts)))
        text = THINK.sub("", text)
    reply.text = "\n\n".join(filter(None, (reply.text, text.strip("\n"))))


def _attach_result(out: Transcript, name: str, result: Any) -> Tool | None:
    """A result goes to the earliest call of its tool in the turn that has none yet."""
    for reply in out.turns[-1] if out.turns else []:
        for tool in reply.tools:
            if not tool.has_result and tool.name == name:
                tool.has_result, tool.result = True, result
                return tool
    out.accounting["unmatched result"] += 1
    return None


def _argument(tool: Tool, line: str) -> None:
    args = tool.input if isinstance(tool.input, dict) else {}
    tool.input = args
    found = ARGUMENT.match(line)
    if found is not None:
        args[found.group(1)] = found.group(2)
    elif args:  # a value's next line
        last = next(reversed(args))
        args[last] = f"{args[last]}\n{line}"
    elif line.strip():
        args["input"] = line
