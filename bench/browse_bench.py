"""`tracehouse browse` on the bench ledger: how long its first screen takes, what a keystroke of
search as you type costs, how long the largest session takes to open, how a session of 3,000
messages scrolls, and the memory it holds.

    uv run python bench/browse_bench.py [--ledger bench/out/search-vectors.db]

Driven by Textual's pilot in this process (a terminal of 120×40). The first screen is timed
from the app's start to its first list and transcript; a keystroke is a search of the query
typed so far (each prefix of 20 queries drawn from the relevance set and the ledger's words),
as the app runs it once typing rests; the largest session is the one with the most messages.
The long session is written for the run in Claude Code's format (3,000 messages: prompts,
answers with code, tool calls and their output), synced into a ledger of its own, opened, and
scrolled from top to bottom a page a key and back to the top: each key is timed until the
screen is drawn again (a stall is a key over 100 ms), beside the floor of a key that does
nothing (what the pilot itself costs).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from search_quality import relevance_set  # noqa: E402

from tracehouse.search.embedders import Lazy  # noqa: E402
from tracehouse.store import open_store  # noqa: E402
from tracehouse.tui.browse import Browse, Row  # noqa: E402
from tracehouse.tui.readers import LedgerReader  # noqa: E402

LONG = 3000  # messages in the long session


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, int(len(ordered) * q) - 1)]


async def bare_screen() -> float:
    """The floor of the first screen: a Textual app of browse's widgets, with nothing in them."""
    from textual.app import App, ComposeResult
    from textual.containers import Horizontal
    from textual.widgets import DataTable, Footer, Input, Static

    from tracehouse.tui.transcript_view import TranscriptView

    class Bare(App[None]):
        def compose(self) -> ComposeResult:
            yield Input()
            with Horizontal():
                yield DataTable()
                yield TranscriptView()
            yield Static("")
            yield Footer()

    began = time.perf_counter()
    async with Bare().run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        took = time.perf_counter() - began
        await pilot.press("q")
    return took


async def measure(ledger: Path) -> dict[str, list[float]]:
    store = open_store(ledger)
    out: dict[str, list[float]] = {"first screen": [], "keystroke": [], "largest session": []}
    began = time.perf_counter()
    browse = Browse(LedgerReader(store, str(ledger), Lazy("wordllama")), str(ledger))
    async with browse.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        out["first screen"].append(time.perf_counter() - began)
        queries = [j.query for j in relevance_set()][:20]
        for query in queries:
            for end in range(3, len(query) + 1, 3):  # a search as each few letters rest
                start = time.perf_counter()
                browse.show_hits(query[:end])
                out["keystroke"].append(time.perf_counter() - start)
        (largest,) = store.query(
            "SELECT session_id, label FROM sessions ORDER BY message_count DESC LIMIT 1"
        )
        for _ in range(3):
            start = time.perf_counter()
            browse.open_row(Row(largest["label"], largest["session_id"]))
            await pilot.pause()
            out["largest session"].append(time.perf_counter() - start)
        await pilot.press("q")
    store.close()
    return out


def long_session(home: Path) -> None:
    """A Claude Code session of LONG messages in `home`: prompts, and answers each with a block
    of code and a tool call whose output follows."""
    sid = "55555555-5555-4555-8555-555555555555"
    folder = home / ".claude" / "projects" / "-tmp-long"
    folder.mkdir(parents=True)
    base = {"cwd": "/tmp/long", "sessionId": sid, "version": "2.1.114", "userType": "external",
            "isSidechain": False, "entrypoint": "cli"}  # fmt: skip
    lines, parent = [], None
    for n in range(LONG // 2):
        at = f"2026-03-01T{10 + n // 3600:02d}:{n // 60 % 60:02d}:{n % 60:02d}.000Z"
        ask, answer = f"u{n}", f"a{n}"
        lines.append({**base, "type": "user", "uuid": ask, "parentUuid": parent, "timestamp": at,
                      "message": {"role": "user", "content": f"Step {n}: fix the test in"
                                  f" module_{n}.py and explain why it failed."}})  # fmt: skip
        code = "\n".join(f"    value_{k} = compute({k}, {n})" for k in range(12))
        text = f"The test fails because of step {n}.\n```python\ndef fix():\n{code}\n```"
        call = {"type": "tool_use", "id": f"t{n}", "name": "Bash",
                "input": {"command": f"pytest -x tests/test_{n}.py"}}  # fmt: skip
        message = {"id": f"msg_{n}", "role": "assistant", "type": "message",
                   "model": "claude-sonnet-4-5", "content": [{"type": "text", "text": text}, call],
                   "usage": {"input_tokens": 10, "output_tokens": 40}}  # fmt: skip
        lines.append({**base, "type": "assistant", "uuid": answer, "parentUuid": ask,
                      "timestamp": at, "requestId": f"req_{n}", "message": message})  # fmt: skip
        parent = answer
    (folder / f"{sid}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))


async def scroll(ledger: Path) -> dict[str, list[float]]:
    store = open_store(ledger)
    out: dict[str, list[float]] = {"long: open": [], "long: page key": []}
    browse = Browse(LedgerReader(store, str(ledger)), str(ledger))
    async with browse.run_test(size=(120, 40)) as pilot:
        (long,) = store.query("SELECT session_id, label, message_count FROM sessions")
        for _ in range(3):
            start = time.perf_counter()
            browse.open_row(Row(long["label"], long["session_id"]))
            await pilot.pause()
            out["long: open"].append(time.perf_counter() - start)
        area = browse.query_one("#transcript")
        area.focus()
        lines = len(area.text.splitlines())  # type: ignore[attr-defined]
        print(f"long session     {long['message_count']:,} messages, {lines:,} lines")
        out["floor: idle key"] = []  # what the pilot itself costs a key: one no binding takes
        for _ in range(50):
            start = time.perf_counter()
            await pilot.press("x")
            out["floor: idle key"].append(time.perf_counter() - start)
        for key in ("pagedown", "pageup"):
            for _ in range(lines // 30 + 2):
                start = time.perf_counter()
                await pilot.press(key)
                out["long: page key"].append(time.perf_counter() - start)
        await pilot.press("q")
    store.close()
    return out


def long_ledger(directory: Path) -> Path:
    """The long session synced into a ledger of its own, in a process of its own (so the
    memory a sync takes is not counted as the app's)."""
    home, ledger = directory / "home", directory / "long.db"
    long_session(home)
    subprocess.run([sys.executable, "-m", "tracehouse.cli.app", "sync", "backfill", "--home",
                    str(home), "--store", str(ledger), "-q", "--source", "claude-code"],
                   check=True)  # fmt: skip
    return ledger


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ledger", type=Path, default=HERE / "out" / "search-vectors.db")
    args = parser.parse_args()
    found: dict[str, list[float]] = {}
    if args.ledger.exists():
        found = {"floor: bare app": [asyncio.run(bare_screen())]}
        found.update(asyncio.run(measure(args.ledger)))
    else:  # made by `bench/search_bench.py --copies 24`
        print(f"{args.ledger} is not there (bench/search_bench.py makes it): the long session only")
    with tempfile.TemporaryDirectory() as directory:
        found.update(asyncio.run(scroll(long_ledger(Path(directory)))))
    for name, values in found.items():
        p50, p95 = statistics.median(values) * 1000, percentile(values, 0.95) * 1000
        print(f"{name:<16} n={len(values):<4} p50 {p50:7.1f} ms  p95 {p95:7.1f} ms"
              f"  max {max(values) * 1000:7.1f} ms")  # fmt: skip
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    status = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines())
    anon, file = (int(status[k].split()[0]) / 1024 for k in ("RssAnon", "RssFile"))
    print(
        f"memory           peak RSS {peak:.0f} MB; at the end {anon:.0f} MB of its own"
        f" (target ≤ 200 MB) and {file:.0f} MB of mapped files (the ledger, which search reads"
        " through a memory map: pages the kernel takes back when it needs them)"
    )


if __name__ == "__main__":
    main()
