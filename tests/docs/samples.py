"""Console samples in the README and docs/: found, run, compared and (on request) rewritten.

A ```console block holds commands (`$ uv run tracehouse …`) each followed by the output it
prints. Every page runs its blocks in order against a ledger of its own, in a sandbox: no user
config, times in UTC, `../shared/fixtures` read from `$TRACEHOUSE_CORPUS`. A line `...` in an
expected output stands for any lines; figures that change from run to run (a run's seconds and
MB/s, run ids, the sandbox's paths, where tracehouse is installed, the
redaction key's hashes, today's times) are compared as placeholders. Commands shown
without their output (a server, a team DSN) go in ```sh blocks, which are not run.

A sample shows a command that works: it exits 0, prints no traceback, and its page holds no
temporary path (`faults`). A block that shows a failure on purpose (a bad flag, a scan that
found secrets) says so: ```console error.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

BLOCK = re.compile(r"^```console( error)?\n(.*?)^```$", re.S | re.M)
PREFIXES = ("uv run tracehouse ", "tracehouse ")
# How a sample names the corpus of real agent homes: the README by its place beside the
# repository, docs/ (which stand alone) by the variable the tests read it from.
FIXTURES = ("../shared/fixtures", "$TRACEHOUSE_CORPUS")
ANY = "..."

# (pattern, placeholder): what differs from one run to the next, in expected and actual alike
VOLATILE = [
    (re.compile(r"\b\d+(?:\.\d+)? s\b"), "<seconds> s"),
    (re.compile(r"\b\d+(?:\.\d+)? (?:MB|KB|GB)/s\b"), "<rate>"),
    (re.compile(r"\brun_\d{8}T\d{6}_[0-9a-f]{8}\b"), "<run>"),
    # the installed `tracehouse` an agent is told to start (`mcp --print-config`),
    # before the sandbox's paths: an installation can be in /tmp too
    (re.compile(r"[^\s'\"]*/bin/tracehouse\b"), "<tracehouse>"),
    (re.compile(r"/tmp/[^\s'\"]*"), "<tmp>"),
    # a redaction marker's hash is keyed by the installation's own key
    (re.compile(r"(\[REDACTED:[a-z0-9-]+:)[0-9a-f]+\]"), r"\1<key>]"),
    (re.compile(r"(?:[^\s'\"]*/shared/fixtures|\$TRACEHOUSE_CORPUS)/"), "<corpus>/"),
    # the time of the export before, which `--since-last` starts from: a run's, whatever day
    (re.compile(r"(changed since )\d{4}-\d{2}-\d{2}T[\d:.]+Z"), r"\1<then>"),
    # a time of today: when the sample ran (session times come from the fixtures and stay)
    (
        re.compile(rf"\b{datetime.now(UTC):%Y-%m-%d}[T ]\d{{2}}:\d{{2}}(?::\d{{2}}(?:\.\d+)?Z?)?"),
        "<now>",
    ),
]


@dataclass
class Step:
    args: list[str]  # a tracehouse command's arguments
    env: dict[str, str]
    cut: tuple[str, int] | None = None  # ("head" | "tail", lines)


@dataclass
class Command:
    line: str  # as written after `$ `
    expected: list[str]
    at: int  # where its output starts in the page (character offset)
    end: int
    error: bool = False  # its block shows a failure on purpose
    block: int = 0  # which console block of its page

    @property
    def steps(self) -> list[Step]:
        """The pipeline: tracehouse commands (the first with `NAME=value` settings before it),
        each fed the one before's output, and `head -N` / `tail -N` cuts."""
        out = []
        for part in self.line.split(" | "):
            words = shlex.split(part)
            env = {}
            while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):
                name, _, value = words.pop(0).partition("=")
                env[name] = value
            text = shlex.join(words) + " "
            prefix = next((p for p in PREFIXES if text.startswith(p)), None)
            if prefix is not None:
                out.append(Step(shlex.split(text[len(prefix) :]), env))
            elif len(words) == 2 and words[0] in ("head", "tail") and words[1][1:].isdigit():
                out.append(Step([], env, cut=(words[0], int(words[1][1:]))))
            else:
                raise ValueError(f"not runnable here: $ {self.line} (show it in an sh block)")
        return out


@dataclass
class Page:
    path: Path
    text: str
    commands: list[Command] = field(default_factory=list)


def read_page(path: Path) -> Page:
    text = path.read_text(encoding="utf-8")
    page = Page(path, text)
    for number, block in enumerate(BLOCK.finditer(text)):
        error = block.group(1) is not None
        offset = block.start(2)
        lines = block.group(2).splitlines(keepends=True)
        current: Command | None = None
        for line in lines:
            if line.startswith("$ "):
                current = Command(line[2:].rstrip("\n"), [], offset + len(line), 0, error, number)
                page.commands.append(current)
            elif current is not None:
                current.expected.append(line.rstrip("\n"))
            offset += len(line)
            if current is not None:
                current.end = offset
    return page


TEMPORARY = re.compile(r"/tmp/pytest-|/tmp/tmp[a-z0-9_]{6,}")


def faults(command: Command, exit_codes: list[int], actual: list[str]) -> list[str]:
    """What makes a sample a failure shown as a success: a non-zero exit, a traceback, a
    temporary path of the run that wrote it. Nothing, in a block marked `console error` (which
    `unshown_errors` requires to show one)."""
    if command.error:
        return []
    found = [f"exits {code}" for code in exit_codes if code != 0]
    if any(line.startswith("Traceback (most recent call last)") for line in actual):
        found.append("prints a traceback")
    if any(TEMPORARY.search(line) for line in command.expected):
        found.append("the page shows a temporary path")
    return found


def unshown_errors(ran: list[tuple[Command, list[int]]]) -> list[str]:
    """The blocks marked `console error` in which every command works."""
    failed: dict[int, bool] = {}
    for command, exit_codes in ran:
        if command.error:
            failed[command.block] = failed.get(command.block, False) or any(exit_codes)
    return [f"block {n + 1} is marked `console error`, but its commands work"
            for n, shown in failed.items() if not shown]  # fmt: skip


RUN_ID = re.compile(r"\brun_\d{8}T\d{6}_[0-9a-f]{8}\b")
DATE_TIME = re.compile(r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?Z?)?")


def _run_times(line: str) -> str:
    """A line that names a run (`sessions show --history`, `runs`) shows that run's times, when
    the sample ran, whatever the day: `<now>`. A session's own times, from the fixtures, never
    stand on such a line and are compared as they are."""
    return DATE_TIME.sub("<now>", line) if RUN_ID.search(line) else line


def normalized(lines: list[str], corpus: str | None = None) -> list[str]:
    out = []
    for line in lines:
        line = _run_times(line.rstrip())
        if corpus:
            line = line.replace(corpus, "$TRACEHOUSE_CORPUS")
        for pattern, placeholder in VOLATILE:
            line = pattern.sub(placeholder, line)
        out.append(line)
    while out and not out[-1]:
        out.pop()
    return out


def matches(expected: list[str], actual: list[str], corpus: str | None = None) -> bool:
    """Line by line, after normalizing; `...` alone on a line takes any lines (none too)."""
    want, got = normalized(expected), normalized(actual, corpus)

    def at(i: int, j: int) -> bool:
        if i == len(want):
            return j == len(got)
        if want[i] == ANY:
            return any(at(i + 1, k) for k in range(j, len(got) + 1))
        return j < len(got) and want[i] == got[j] and at(i + 1, j + 1)

    return at(0, 0)


def rewritten(expected: list[str], actual: list[str]) -> list[str]:
    """The actual output to write into the page, cut where the sample was cut with `...`."""
    actual = [line.rstrip() for line in actual]
    while actual and not actual[-1]:
        actual.pop()
    if ANY not in expected:
        return actual
    head = expected.index(ANY)
    tail = len(expected) - 1 - max(i for i, line in enumerate(expected) if line == ANY)
    if head + tail >= len(actual):
        return actual
    return [*actual[:head], ANY, *(actual[len(actual) - tail :] if tail else [])]
