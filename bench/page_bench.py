"""The gateway's pages, timed as a reader meets them: the session list of 200 sessions and a
session of 1,000 messages, rendered on the server, against the floor of reading the same rows.

    uv run python bench/page_bench.py [--copies 8] [--requests 40]
    (also: uv run python bench/gateway_bench.py --pages)

The ledger is a SQLite backfill of `backfill_bench.py`'s corpus (`--copies` of every fixture
source) with one more session: 1,000 messages drawn from the fixtures' own Claude Code replies,
prompts and tool calls (Markdown, code, edits, long results), in Claude Code's format. A gateway
(`tracehouse serve`) runs on it; each page is requested `--requests` times, interleaved, after
a first view (printed apart: it renders what later views find kept); the floor is `session_detail` /
`list_sessions` called in-process for the same rows. Printed: p50 and p95 per page, the ratio
to the floor, and each page's bytes (folded results are fetched when opened, so they are not in
it). Target (issue #43): ≤ 200 ms p95 each, a session page ≤ 1 MB.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx
from backfill_bench import HERE, OUT, build_corpus

sys.path.insert(0, str(HERE.parent))

from tests.gateway.server import Gateway, ledger_with_tokens
from tracehouse.reports.filters import list_sessions
from tracehouse.store import open_store
from tracehouse.store.reads import find_session, session_detail

SID = "b0b0b0b0-0000-4000-8000-000000000001"


def long_session(corpus: Path, out: Path, messages: int = 1000) -> Path:
    """A Claude Code session of `messages` messages, its records taken in turn from the
    corpus' own Claude transcripts (fresh uuids, one chain)."""
    picked: list[dict] = []
    for path in sorted(corpus.glob(".claude/projects/*/*.jsonl"))[:200]:
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if record.get("type") in ("user", "assistant") and isinstance(
                record.get("message"), dict
            ):
                picked.append(record)
    project = out / ".claude" / "projects" / "-bench-long"
    project.mkdir(parents=True, exist_ok=True)
    lines, parent = [], None
    for n in range(messages):
        record = dict(picked[n % len(picked)])
        record.update(
            sessionId=SID,
            uuid=str(uuid.uuid5(uuid.NAMESPACE_URL, f"{n}")),
            parentUuid=parent,
            isSidechain=False,
            timestamp=f"2026-01-01T{n // 3600 % 24:02d}:{n // 60 % 60:02d}:{n % 60:02d}.000Z",
        )
        if record["type"] == "assistant":
            record["message"] = {**record["message"], "id": f"msg_bench_{n}"}
        parent = record["uuid"]
        lines.append(json.dumps(record))
    (project / f"{SID}.jsonl").write_text("\n".join(lines) + "\n")
    return out


def timed(client: httpx.Client, path: str) -> tuple[float, int]:
    started = time.perf_counter()
    answer = client.get(path)
    answer.raise_for_status()
    return time.perf_counter() - started, len(answer.content)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--copies", type=int, default=8)
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument("--corpus", type=Path, default=HERE.parent.parent / "shared" / "fixtures")
    args = parser.parse_args(argv)
    corpus = build_corpus(args.corpus, args.copies)
    work = OUT / f"pages-x{args.copies}"
    ledger = work / "ledger.db"
    if not ledger.exists():
        work.mkdir(parents=True, exist_ok=True)
        extra = long_session(corpus, work / "long-home")
        for command in (["--config", str(corpus / "sources.toml")],
                        ["--home", str(extra), "--source", "claude-code"]):  # fmt: skip
            subprocess.run([sys.executable, "-m", "tracehouse.cli.app", "sync", "backfill",
                            "--store", str(ledger), "-q", *command], check=False)  # fmt: skip
    store = open_store(str(ledger))
    (long,) = store.query("SELECT label, message_count FROM sessions WHERE source_session_id = ?",
                          [SID])  # fmt: skip
    (count,) = store.query("SELECT count(*) AS n FROM sessions")
    print(f"ledger   {count['n']:,} sessions; the long session {long['label']}:"
          f" {long['message_count']:,} messages")  # fmt: skip
    token = ledger_with_tokens(str(ledger), {"r": (f"bench-{uuid.uuid4().hex[:6]}", "read")})["r"]
    floors = {
        "list of 200": lambda: list_sessions(store, None, 200),
        "1,000-message session": lambda: session_detail(
            store, find_session(store, long["label"])["session_id"]),
    }  # fmt: skip
    pages = {"list of 200": "/?per=200", "1,000-message session": f"/s/{long['label']}"}
    gateway = Gateway(str(ledger), work / "gateway.log").start()
    try:
        with httpx.Client(base_url=gateway.url, cookies={"tracehouse_token": token},
                          timeout=60) as client:  # fmt: skip
            first = {name: timed(client, path)[0] for name, path in pages.items()}
            took: dict[str, list[float]] = {name: [] for name in pages}
            floor: dict[str, list[float]] = {name: [] for name in pages}
            size: dict[str, int] = {}
            for _ in range(args.requests):
                for name, path in pages.items():
                    seconds, size[name] = timed(client, path)
                    took[name].append(seconds)
                    started = time.perf_counter()
                    floors[name]()
                    floor[name].append(time.perf_counter() - started)
    finally:
        gateway.stop()
        store.close()
    met = True
    for name in pages:
        p50, p95 = _pct(took[name], 50), _pct(took[name], 95)
        base = statistics.median(floor[name])
        print(f"page     {name:<24} p50 {p50 * 1000:6.1f} ms  p95 {p95 * 1000:6.1f} ms"
              f"  (floor: reading its rows {base * 1000:.1f} ms, {p50 / base:.1f}x)"
              f"  {size[name] / 1024:,.0f} KB; first view {first[name] * 1000:.0f} ms")  # fmt: skip
        met &= p95 <= 0.2 and size[name] <= 1024 * 1024
    print(f"target: ≤ 200 ms p95 each, a session page ≤ 1 MB — {'met' if met else 'NOT met'}")


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


if __name__ == "__main__":
    main()
