"""A project's `.aider.chat.history.md` → ledger rows (README.md here has the mapping).

Aider appends to it in the directory it runs in; each launch starts with `# aider chat started
at <local time>`, the only session boundary and the only time in the file. Within a session,
`#### ` lines are what the user typed (a prompt of several lines is several such lines), `> `
lines what aider printed (its version and model, `Tokens: … sent, … received. Cost: $…`,
applied edits, commits, questions and errors) and the other lines the model's reply. The
prompts' exact times come from `.aider.input.history` beside it, matched in order by text.
Aider writes local times with no zone: they are read in this machine's zone, where aider ran
(the ledger keeps UTC, as for every agent), and the offset taken is kept with the session.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import xxhash

from tracehouse.model.tokens import ledger_counts
from tracehouse.parsers.base import ParseOptions, Unit, UnitResult
from tracehouse.parsers.kit.conversation import Conversation
from tracehouse.parsers.kit.document import Read, parse_document
from tracehouse.parsers.kit.jsonl import read_file
from tracehouse.parsers.kit.layout import Layout

PROVIDER = "aider"
PER_PROJECT = True  # its roots are the settings' project roots
NAME = ".aider.chat.history.md"
STARTED = re.compile(r"^# aider chat started at (\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)\s*$")
TOKENS = re.compile(r"^Tokens: (?P<parts>.*?)(?:\. Cost: \$(?P<cost>[\d.]+) message.*)?$")
COUNT = re.compile(r"([\d.]+)([kKmM]?) (sent|received|cache write|cache hit)")
MODEL = re.compile(r"^(?:Main model|Model): (\S+) with ")
VERSION = re.compile(r"^Aider v(\S+)")
EDIT = re.compile(r"^Applied edit to (.+)$")
COMMIT = re.compile(r"^Commit ([0-9a-f]{7,}) (.*)$")
THINKING = re.compile(r"<thinking-content-([0-9a-f]+)>(.*?)</thinking-content-\1>\n?", re.S)
LAYOUT = Layout(PROVIDER, (NAME, f"*/{NAME}", f"*/*/{NAME}"), per_project=True)
discover, unit_for, watch_roots = LAYOUT.discover, LAYOUT.unit_for, LAYOUT.watch_roots


def default_roots(home: Path, env: Mapping[str, str]) -> list[Path]:
    return [home]


@dataclass
class Block:
    kind: str  # prompt, reply or output
    line: int  # where it starts (1-based)
    lines: list[str] = field(default_factory=list)


def build(unit: Unit, data: bytes, options: ParseOptions) -> Read:
    read = Read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:  # kept with replacement characters; each such line is named
        text = data.decode("utf-8", "replace")
        for number, line in enumerate(data.split(b"\n"), 1):
            try:
                line.decode("utf-8")
            except UnicodeDecodeError as exc:
                read.problems.append((f"line {number}", f"not UTF-8 text ({exc.reason}): kept"
                                      " with replacement characters"))  # fmt: skip
    typed = _input_times(unit.path.parent / ".aider.input.history")
    project = str(unit.path.parent)
    seen: dict[str, int] = {}
    sessions: list[_Session] = []
    for number, written in enumerate(text.split("\n"), 1):
        raw = written.removesuffix("\r")  # a history written on Windows
        started = STARTED.match(raw)
        if started:
            stamp = f"{started.group(1)}T{started.group(2)}"
            seen[stamp] = seen.get(stamp, 0) + 1
            sessions.append(_Session(unit, project, stamp, seen[stamp], options, typed))
        elif sessions:
            sessions[-1].line(number, raw)
        elif raw.strip():
            read.count("line before any session")
    for session in sessions:
        session.flush()
        read.sessions.append((session.talk, session.fields))
    return read


class _Session:
    def __init__(self, unit: Unit, project: str, stamp: str, nth: int, options: ParseOptions,
                 typed: list[tuple[str, str]]) -> None:  # fmt: skip
        head = xxhash.xxh32_hexdigest(project.encode())
        sid = f"{stamp.replace('-', '').replace(':', '')}-{head}" + (f"-{nth}" if nth > 1 else "")
        self.talk = Conversation(PROVIDER, sid, unit.key, options.max_field)
        self.at, offset = in_utc(stamp)
        self.talk.seen(self.at)
        self.typed = typed
        self.block: Block | None = None
        self.fields: dict[str, Any] = {"workspace_path": project,
                                       "metadata": {"local_offset": offset}}  # fmt: skip

    def line(self, number: int, raw: str) -> None:
        text = raw[:-2] if raw.endswith("  ") else raw  # Markdown's hard breaks
        # Aider quotes what it printed line by line: "> text", or ">" alone for a blank line. A
        # reply's own lines may start with ">" too: its edits end with ">>>>>>> REPLACE".
        quoted = text == ">" or text.startswith("> ")
        kind = "prompt" if text.startswith("####") else "output" if quoted else "reply"
        body = text[5:] if kind == "prompt" else text[2:] if kind == "output" else text
        if self.block is None or self.block.kind != kind:
            self.flush()
            if kind == "reply" and not body.strip():
                return  # blank lines between blocks
            self.block = Block(kind, number)
        self.block.lines.append(body)

    def flush(self) -> None:
        block, self.block = self.block, None
        if block is None:
            return
        key, body = f"L{block.line}", "\n".join(block.lines).strip("\n")
        if block.kind == "prompt":
            self.at = self._typed_at(body) or self.at
            self.talk.prompt(key, body, self.at, titled=not body.startswith("/"))
        elif block.kind == "reply" and body.strip():
            said, thinking = _thinking(body)
            self.talk.reply(key, said, self.at, thinking=thinking, model=self.fields.get("model"))
        elif block.kind == "output":
            self._output(key, block)

    def _output(self, key: str, block: Block) -> None:
        shown: list[str] = []
        for offset, line in enumerate(block.lines):
            where = f"L{block.line + offset}"
            if m := VERSION.match(line):
                self.fields["tool_version"] = m.group(1)
            elif m := MODEL.match(line):
                self.fields["model"] = m.group(1)
                self.talk.note_model(m.group(1))
            elif m := TOKENS.match(line):
                self._tokens(m)
                continue
            elif (m := EDIT.match(line)) and self.talk.turn is not None:
                self.talk.call(where, "apply_edit", {"path": m.group(1)}, self.at)
                self.talk.result(where, line, self.at)
                continue
            elif (m := COMMIT.match(line)) and self.talk.turn is not None:
                self.talk.call(where, "git_commit", {"sha": m.group(1), "message": m.group(2)},
                               self.at)  # fmt: skip
                self.talk.result(where, line, self.at)
                continue
            shown.append(line)
        if any(s.strip() for s in shown):
            self.talk.notice(key, "\n".join(shown).strip("\n"), self.at, {"notice": "aider"})

    def _tokens(self, found: re.Match[str]) -> None:
        counts = {kind: _number(n, unit) for n, unit, kind in COUNT.findall(found["parts"])}
        cost = float(found["cost"]) if found["cost"] else None
        spent = ledger_counts(
            input=counts.get("sent", 0), output=counts.get("received", 0),
            cache_read=counts.get("cache hit", 0), cache_write=counts.get("cache write", 0),
            input_holds_cache=True, output_holds_reasoning=True,
        )  # fmt: skip
        # Aider prints no reasoning count, and a cache part only where litellm reports one (not
        # for an OpenAI-compatible provider, whose cache it never shows): what it did not print
        # is "not recorded", NULL, never 0.
        del spent["reasoning_tokens"]
        for printed, column in (("cache hit", "cached_input_tokens"),
                                ("cache write", "cache_write_tokens")):  # fmt: skip
            if printed not in counts:
                del spent[column]
        self.talk.usage(spent, cost)
        self.fields["metadata"]["tokens"] = "rounded"  # aider prints 9.4k, not 9,412

    def _typed_at(self, prompt: str) -> str | None:
        """When the prompt was typed: the first unused input-history entry with its text."""
        for index, (at, text) in enumerate(self.typed):
            if at >= self.at[:19] and text.strip() == prompt.strip():
                del self.typed[: index + 1]
                return at
        return None


def _thinking(body: str) -> tuple[str | None, str | None]:
    """A reply's text and the reasoning aider wrapped in `<thinking-content-HASH>` tags (0.86:
    a reasoning model's thoughts, printed before its answer). Empty reasoning is none."""
    found = [m.group(2).strip("\n") for m in THINKING.finditer(body)]
    said = THINKING.sub("", body).strip("\n")
    thought = "\n\n".join(t for t in found if t.strip())
    return said or None, thought or None


def _number(value: str, unit: str) -> int:
    scale = {"k": 1_000, "m": 1_000_000}.get(unit.lower(), 1)
    return round(float(value) * scale)


def _input_times(path: Path) -> list[tuple[str, str]]:
    """`.aider.input.history`: `# <local time>` then `+<line>` per line of what was typed."""
    try:
        text = read_file(str(path)).decode("utf-8", "replace")
    except OSError:
        return []
    out: list[tuple[str, list[str]]] = []
    for line in text.split("\n"):
        if line.startswith("# ") and len(line) >= 21:
            out.append((in_utc(line[2:21].replace(" ", "T"))[0], []))
        elif line.startswith("+") and out:
            out[-1][1].append(line[1:])
    return [(at, "\n".join(lines)) for at, lines in out]


def in_utc(local: str) -> tuple[str, str]:
    """A local time as aider writes it (`2025-12-03T14:44:06`, no zone) in UTC, read in this
    machine's zone, with the offset taken (`+01:00`); a time it cannot read, as written."""
    try:
        moment = datetime.fromisoformat(local).astimezone()  # naive: this machine's zone
    except ValueError:
        return local, ""
    offset = moment.isoformat()[-6:]
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"), offset


def parse(unit: Unit, cursor: Mapping[str, Any] | None, options: ParseOptions) -> UnitResult:
    return parse_document(PROVIDER, unit, cursor, options, build)
