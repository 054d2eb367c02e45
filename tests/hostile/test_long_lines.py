"""A line larger than memory: never held whole, skipped while streaming, rejected with its offset
and size, and the watermark moved past it so that no later run starts on it again (issue #40).
The limit (`max_line_bytes`) is set small here; `bench/long_line_bench.py` measures 2 GB."""

from __future__ import annotations

import io
import os
import shutil
import time
from pathlib import Path

from tests.hostile.test_hostile_input import CLAUDE_HOME
from tracehouse.parsers.kit.jsonl import TAIL, read_chunk
from tracehouse.parsers.registry import PARSERS
from tracehouse.pipeline.options import SyncOptions, SyncReport
from tracehouse.pipeline.sync import sync
from tracehouse.store import open_store

LIMIT = 64 * 1024
DATA = Path(__file__).resolve().parent.parent / "data"


def _sync(home: Path, ledger: Path, provider: str, limit: int = LIMIT) -> tuple[SyncReport, int]:
    store = open_store(str(ledger))
    try:
        roots = PARSERS[provider].default_roots(home, {})
        report = sync(store, SyncOptions(sources={provider: roots}, max_line=limit))
        return report, len(list(store.rows("messages")))
    finally:
        store.close()


def _big(size: int) -> bytes:
    return b'{"type":"user","message":{"role":"user","content":"' + b"x" * size + b'"}}'


def _home_with(tmp_path: Path, line: bytes, at: int = 3) -> tuple[Path, Path]:
    home = tmp_path / "home"
    shutil.copytree(CLAUDE_HOME, home)
    main = next((home / ".claude" / "projects" / "-tmp-demo").glob("1111*.jsonl"))
    lines = main.read_bytes().split(b"\n")
    lines.insert(at, line)
    main.write_bytes(b"\n".join(lines))
    return home, main


def test_a_line_over_the_limit_is_skipped_rejected_and_never_read_again(tmp_path: Path) -> None:
    _clean, messages = _sync(CLAUDE_HOME, tmp_path / "clean.db", "claude-code")
    home, main = _home_with(tmp_path, _big(5 * LIMIT))
    offset = sum(len(line) + 1 for line in main.read_bytes().split(b"\n")[:3])
    report, stored = _sync(home, tmp_path / "ledger.db", "claude-code")
    assert [(r.unit_key, r.location) for r in report.rejects] == [
        (str(main), f"line 4 (byte {offset})")
    ]
    assert f"{len(_big(5 * LIMIT)):,} bytes, over the {LIMIT:,}-byte limit" in (
        report.rejects[0].reason
    )
    assert stored == messages  # every other line of the file, before and after it
    again, _ = _sync(home, tmp_path / "ledger.db", "claude-code")
    assert again.parsed == 0 and again.bytes_read == 0  # the watermark moved past it


def test_an_append_after_a_skipped_line_reads_only_the_new_lines(tmp_path: Path) -> None:
    home, main = _home_with(tmp_path, _big(3 * LIMIT), at=10**6)  # the last line
    with main.open("ab") as f:
        f.write(b"\n")
    report, before = _sync(home, tmp_path / "ledger.db", "claude-code")
    assert len(report.rejects) == 1
    with main.open("ab") as f:
        f.write(
            b'{"type":"user","uuid":"u-after","sessionId":"11111111-1111-4111-8111-111111111111",'
            b'"timestamp":"2026-01-01T00:09:00.000Z","message":{"role":"user","content":"more"}}\n'
        )
    report, after = _sync(home, tmp_path / "ledger.db", "claude-code")
    assert report.rejects == [] and after == before + 1
    assert report.bytes_read < LIMIT  # the skipped line was not read again


def test_a_long_last_line_still_being_written_waits_holding_nothing(tmp_path: Path) -> None:
    home, main = _home_with(tmp_path, b"", at=10**6)
    with main.open("ab") as f:
        f.write(_big(3 * LIMIT)[:-5])  # no newline, and the file was just written
    report, _ = _sync(home, tmp_path / "ledger.db", "claude-code")
    assert report.rejects == [] and report.waiting == 1
    old = time.time() - 60
    os.utime(main, (old, old))  # quiet now: the writer is done, the line is whole
    report, _ = _sync(home, tmp_path / "ledger.db", "claude-code")
    assert [r.location.split(" (")[0] for r in report.rejects] == [f"line {_lines(main)}"]


def _lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") + 1


def test_the_reader_keeps_only_the_last_bytes_of_a_skipped_line() -> None:
    data = b"a\n" + b"y" * 1_000_000 + b"z\nb\n"
    skipped = read_chunk(io.BytesIO(data), 2, len(data), 4096, final_line_complete=False,
                         max_line=10_000)  # fmt: skip
    assert skipped.data == b"" and skipped.skipped == 1_000_002
    assert (skipped.start, skipped.end) == (2, 1_000_004)
    assert skipped.tail == data[1_000_004 - TAIL : 1_000_004]
    after = read_chunk(io.BytesIO(data), skipped.end, len(data), 4096, final_line_complete=False)
    assert after.data == b"b\n" and after.eof


def test_a_document_over_the_limit_is_rejected_unread(tmp_path: Path) -> None:
    home = tmp_path / "home"
    shutil.copytree(DATA / "gemini" / "home", home)
    chats = home / ".gemini" / "tmp" / "weather-app" / "chats"
    big = chats / "session-2026-03-10T09-15-aaaa1111.json"
    big.write_bytes(b'{"sessionId": "aaaa1111", "pad": "' + b"p" * 2 * LIMIT + b'"}')
    report, _ = _sync(home, tmp_path / "ledger.db", "gemini-cli")
    assert [(r.unit_key, r.location) for r in report.rejects] == [(str(big), "document")]
    assert "over the" in report.rejects[0].reason
    again, _ = _sync(home, tmp_path / "ledger.db", "gemini-cli")
    assert again.parsed == 0
