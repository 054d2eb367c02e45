"""Typed decoding of Claude Code lines (msgspec) against the kit's orjson decode (issue #71).

    uv run --with msgspec python bench/typed_decode_bench.py [--copies 24] [--repeat 3]

msgspec is not one of tracehouse's dependencies: `--with` brings it for this run only. The home
is the backfill bench's corpus (`bench/corpus.py`), its `.claude` read into memory first, so
that only decoding is timed, interleaved `--repeat` times:

  orjson         `orjson.loads` of every line: what `kit.jsonl.decode_line` does
  typed record   msgspec into a struct of the record keys the parser reads, `toolUseResult`
                 typed down to the fields it reads (a third of the bytes are the rest of it:
                 files read, outputs and patches the message's own content holds too)
  raw + typed    msgspec into `{key: Raw}`, then each value by orjson but `toolUseResult` as
                 above: the same dict the parser reads today, unknown keys kept (the parser
                 names them in the session's metadata), less what it never reads

Printed: each one's median and range, and its MB/s.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import orjson

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from backfill_bench import build_corpus, files_of  # noqa: E402

# The top-level keys the Claude Code parser reads (`parsers/claude_code/records.KNOWN_KEYS`).
KEYS = ("type", "uuid", "parentUuid", "logicalParentUuid", "sessionId", "session_id",
        "timestamp", "cwd", "gitBranch", "version", "isSidechain", "agentId", "userType",
        "entrypoint", "isMeta", "slug", "message", "requestId", "sourceToolAssistantUUID",
        "sourceToolUseID", "promptId", "permissionMode", "isCompactSummary",
        "isVisibleInTranscriptOnly", "isApiErrorMessage", "subtype", "content", "level",
        "attachment", "todos", "thinkingMetadata", "origin", "promptSource", "effort",
        "teamName", "toolDenialKind", "sessionKind")  # fmt: skip


class ToolUseResult(msgspec.Struct):
    """What `claude_code/tools.py` and `records.web_sources`/`file_source` read of it."""

    agentId: Any = None
    url: Any = None
    code: Any = None
    result: Any = None
    query: Any = None
    results: Any = None
    file: Any = None


RESULT = ToolUseResult | str | list[Any] | int | float | bool | None
Record = msgspec.defstruct(
    "Record", [(k, Any, None) for k in KEYS] + [("toolUseResult", RESULT, None)]
)


def decoders(lines: list[bytes]) -> dict[str, Callable[[], None]]:
    typed = msgspec.json.Decoder(Record)
    raw = msgspec.json.Decoder(dict[str, msgspec.Raw])
    result = msgspec.json.Decoder(RESULT)

    def plain() -> None:
        for line in lines:
            orjson.loads(line)

    def record() -> None:
        for line in lines:
            typed.decode(line)

    def split() -> None:
        for line in lines:
            {k: result.decode(v) if k == "toolUseResult" else orjson.loads(memoryview(v))
             for k, v in raw.decode(line).items()}  # fmt: skip

    return {"orjson": plain, "typed record": record, "raw + typed": split}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--copies", type=int, default=24)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--corpus", type=Path, default=Path(os.environ.get(
        "TRACEHOUSE_CORPUS", HERE.parent.parent / "shared" / "fixtures")))  # fmt: skip
    args = parser.parse_args()
    if args.repeat < 1 or args.copies < 1:
        parser.error("--repeat and --copies must be at least 1")
    home = build_corpus(args.corpus, args.copies) / ".claude"
    lines = [line for path in files_of(home) if path.suffix == ".jsonl"
             for line in path.read_bytes().split(b"\n") if line.strip()]  # fmt: skip
    mb = sum(map(len, lines)) / 1e6
    print(f"home     Claude Code of {args.copies} copies: {len(lines):,} lines, {mb:,.0f} MB")
    found: dict[str, list[float]] = {}
    for _ in range(args.repeat):
        for name, decode in decoders(lines).items():
            began = time.perf_counter()
            decode()
            found.setdefault(name, []).append(time.perf_counter() - began)
    for name, seconds in found.items():
        median = statistics.median(seconds)
        print(f"{name:14} {median:5.2f} s (range {min(seconds):.2f}–{max(seconds):.2f})"
              f"  {mb / median:4.0f} MB/s")  # fmt: skip


if __name__ == "__main__":
    main()
