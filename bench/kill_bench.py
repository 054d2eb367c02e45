"""Crash safety, measured: SIGKILL a run at random moments, run again, compare with a clean run.

    uv run python bench/kill_bench.py [--kills 40] [--modes sqlite,postgresql,live] [--seed 1]
                                      [--workers 1,2,4]

The corpus is every fixture home, copied once into bench/out/kill and named to the CLI with one
`--source` per home and source (all thirteen: each source's own default places under the home). For
each mode, a clean run gives the reference ledger; then, `--kills` times, a fresh ledger is
filled by a run that is killed (SIGKILL to its whole process group: main process and workers) at
a random moment, and by a second run to completion. The ledger must equal the reference row for
row (content tables, session rows without their import times, cursors, unresolved rejects, and on
SQLite each search index's terms with the rows and times they occur in, and the usage rollup),
and no scratch copy may be left in TMPDIR or beside the ledger (the second run removes what the
killed one left).

  sqlite       `sync backfill` into a SQLite file
  postgresql   `sync backfill` into a fresh schema (TRACEHOUSE_PG_DSN, default the local server)
  live         `sync live` while a writer appends to a transcript; killed, then the appends
               finish and `sync backfill` catches up; the reference is a backfill of the end state

`--workers 1,2,4` runs every mode at each worker count (TRACEHOUSE_WORKERS), the clean run
included; by default the runs take the default (one per core). `--builders`: a first load with
workers builds its search indexes beside the writer on any number of cores
(TRACEHOUSE_INDEX_BUILDERS_MIN_CORES=1; by default only from 4 cores on), and the reference is a
clean run without them.

Target (issue #13): ≥ 100 kill points across the modes, 0 diffs, 0 leftovers (issue #46: at
every worker count).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
OUT = HERE / "out" / "kill"
sys.path.insert(0, str(HERE.parent))

from backfill_bench import worker_counts  # noqa: E402

from tracehouse.parsers.registry import PARSERS  # noqa: E402
from tracehouse.store import open_store  # noqa: E402

DSN = os.environ.get("TRACEHOUSE_PG_DSN") or "postgresql://postgres@127.0.0.1:5432/test"
TABLES = ("sessions", "turns", "messages", "tool_calls", "message_sources", "threads")
WHEN = {"first_imported_at", "last_imported_at", "host", "importer_version", "source_missing_at",
        "source_read_at"}  # fmt: skip
APPENDS = 40


def build_home(corpus: Path) -> tuple[Path, list[str]]:
    """A copy of every fixture home, and the `--source` flags that name them."""
    target = OUT / "homes"
    if not (target / ".complete").exists():
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(corpus / "homes", target, symlinks=True)
        (target / ".complete").write_text("ok")
    flags = []
    for home in sorted(p for p in target.iterdir() if p.is_dir()):
        for provider, parser in PARSERS.items():
            for root in parser.default_roots(home, {}):
                if root.is_dir():
                    flags += ["--source", f"{provider}={root}"]
    return target, flags


def command(*args: str) -> list[str]:
    return [sys.executable, "-c", "from tracehouse.cli.app import main; main()", *args]


def snapshot(store_url: str) -> dict[str, Any]:
    store = open_store(store_url)
    try:
        out: dict[str, Any] = {
            t: sorted(repr({k: v for k, v in r.items() if k not in WHEN}) for r in store.rows(t))
            for t in TABLES
        }
        out["watermarks"] = sorted(
            (w["unit_key"], repr(_without_times(w["cursor"]))) for w in store.rows("watermarks")
        )
        out["rejects"] = sorted(
            (r["unit_key"], r["location"]) for r in store.rows("rejects") if not r["resolved_at"]
        )
        if store.backend == "sqlite":
            out.update(_search_terms(store))
            # the usage rollup, kept in the transaction of the rows it sums
            out["usage_slots"] = sorted(
                store.conn.execute("SELECT * FROM usage_slots WHERE turns <> 0").fetchall()
            )
        return out
    finally:
        store.close()


def _search_terms(store: Any) -> dict[str, list[tuple[Any, ...]]]:
    """Each SQLite search index as FTS5 counts it, whatever the rowids a run gave out: every
    term with the rows it is in and how often it occurs. A row indexed twice, missed, or indexed
    with text it no longer holds changes its terms' counts."""
    from tracehouse.search.sqlite_index import INDEXES

    out = {}
    for index in INDEXES:
        vocabulary = f"temp.terms_{index.name}"
        store.conn.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS {vocabulary}"
            f" USING fts5vocab(main, {index.name}, row)"
        )
        rows = store.conn.execute(f"SELECT term, doc, cnt FROM {vocabulary}").fetchall()
        out[index.name] = sorted(repr(row) for row in rows)
    return out


def _without_times(cursor: Any) -> Any:
    """A cursor less when it was taken (a Cursor reconciliation time; the mtime of a transcript
    the live mode rewrites before each kill point): where a unit was read to, not when."""
    if isinstance(cursor, str):
        import orjson

        cursor = orjson.loads(cursor)
    return {k: v for k, v in cursor.items() if k not in ("reconciled_at", "mtime_ns")}


def diff(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    return [f"{t}: {len(set(a[t]) ^ set(b[t]))} rows differ" for t in a if a[t] != b[t]]


class Stores:
    """Fresh ledgers: SQLite files, or PostgreSQL schemas dropped when the bench ends."""

    def __init__(self, backend: str) -> None:
        self.backend = backend
        self.schemas: list[str] = []
        self.n = 0

    def new(self) -> str:
        self.n += 1
        if self.backend != "postgresql":
            path = OUT / f"ledger-{self.n}.db"
            for suffix in ("", "-wal", "-shm", "-journal"):
                Path(f"{path}{suffix}").unlink(missing_ok=True)
            return str(path)
        import psycopg

        from tests.pg import with_schema

        schema = f"kill_{os.getpid()}_{self.n}"
        with psycopg.connect(DSN, autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {schema}")
        self.schemas.append(schema)
        return with_schema(DSN, schema)

    def drop_all(self) -> None:
        if not self.schemas:
            return
        import psycopg

        with psycopg.connect(DSN, autocommit=True) as conn:
            for schema in self.schemas:
                conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def run(args: list[str], env: dict[str, str], kill_after: float | None = None) -> int:
    """Run a CLI command in its own process group; SIGKILL the group after `kill_after` s."""
    process = subprocess.Popen(
        command(*args), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        start_new_session=True,
    )  # fmt: skip
    if kill_after is None:
        _out, err = process.communicate()
        if process.returncode not in (0, 1):
            raise SystemExit(f"{' '.join(args[:2])} failed: {err.decode()[-1500:]}")
        return process.returncode
    try:
        process.wait(timeout=kill_after)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        return -9
    return process.returncode


def _described(tmp: Path, names: list[str]) -> list[str]:
    """Each leftover with what it is, so that one seen once can be traced: a directory and its
    first entries, or a file, its size and its first bytes."""
    out = []
    for name in names:
        path = tmp / name if (tmp / name).exists() else OUT / name
        try:
            if path.is_dir():
                out.append(f"{name}/ {sorted(os.listdir(path))[:5]}")
            else:
                out.append(f"{name} ({path.stat().st_size} B: {path.read_bytes()[:40]!r})")
        except OSError as exc:
            out.append(f"{name} ({exc.strerror})")
    return out


class Appender:
    """Appends APPENDS user lines, one every 50 ms, to one Claude transcript of the home."""

    def __init__(self, transcript: Path) -> None:
        self.path = transcript
        self.original = transcript.read_bytes()
        self.written = 0

    def reset(self) -> None:
        self.path.write_bytes(self.original)
        self.written = 0

    def line(self, n: int) -> bytes:
        return (
            b'{"type":"user","uuid":"kill-bench-%d","sessionId":"kill-bench","timestamp":'
            b'"2026-01-01T00:00:%02d.000Z","message":{"role":"user","content":"line %d"}}\n'
            % (n, n % 60, n)
        )

    def run(self, stop: threading.Event) -> None:
        while self.written < APPENDS and not stop.is_set():
            with self.path.open("ab") as f:
                f.write(self.line(self.written))
            self.written += 1
            time.sleep(0.05)

    def finish(self) -> None:
        while self.written < APPENDS:
            with self.path.open("ab") as f:
                f.write(self.line(self.written))
            self.written += 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kills", type=int, default=40, help="kill points per mode")
    parser.add_argument("--modes", default="sqlite,postgresql,live")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--corpus", type=Path, default=HERE.parent.parent / "shared" / "fixtures")
    parser.add_argument("--workers", type=worker_counts, default=[0], help="e.g. 1,2,4")
    parser.add_argument("--builders", action="store_true", help="index builders on any cores")
    args = parser.parse_args()
    counts = args.workers  # 0: the default, one per core
    rng = random.Random(args.seed)
    OUT.mkdir(parents=True, exist_ok=True)
    home, flags = build_home(args.corpus)
    tmp = OUT / "tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp), "HOME": str(OUT / "user-home")}
    if args.builders:
        env["TRACEHOUSE_INDEX_BUILDERS_MIN_CORES"] = "1"
    transcript = max(home.glob("*/.claude/projects/*/*.jsonl"), key=lambda p: p.stat().st_size)
    appender = Appender(transcript)
    totals = {"tried": 0, "killed": 0, "diffs": 0, "leftovers": 0}
    failures: list[str] = []
    for mode, workers in [(m, n) for n in counts for m in args.modes.split(",")]:
        if workers:
            env["TRACEHOUSE_WORKERS"] = str(workers)
            mode_name = f"{mode}, {workers} workers"
        else:
            mode_name = mode
        stores = Stores("postgresql" if mode == "postgresql" else "sqlite")
        try:
            appender.reset()
            if mode == "live":
                appender.finish()
            reference_store = stores.new()
            started = time.perf_counter()
            # With --builders, the reference's index is the writer's own (the terms compared
            # are rowid-free): every run after must hold what it would have indexed.
            clean = {**env, "TRACEHOUSE_INDEX_BUILDERS_MIN_CORES": "0"} if args.builders else env
            run(["sync", "backfill", *flags, "--store", reference_store, "-q"], clean)
            clean_seconds = time.perf_counter() - started
            reference = snapshot(reference_store)
            print(
                f"{mode_name}: clean run {clean_seconds:.2f}s,"
                f" {len(reference['messages'])} messages"
            )
            tried = diffs = leftovers = killed = 0
            for n in range(args.kills):
                appender.reset()
                url = stores.new()
                if mode == "live":
                    stop = threading.Event()
                    writer = threading.Thread(target=appender.run, args=(stop,))
                    writer.start()
                    live = ["sync", "live", *flags, "--store", url, "-q"]
                    code = run(live, env, kill_after=rng.uniform(0.3, 4.0))
                    stop.set()
                    writer.join()
                    appender.finish()
                else:
                    backfill = ["sync", "backfill", *flags, "--store", url, "-q"]
                    code = run(backfill, env, kill_after=rng.uniform(0, clean_seconds * 1.1))
                run(["sync", "backfill", *flags, "--store", url, "-q"], env)
                tried += 1
                killed += code == -9
                found = diff(reference, snapshot(url))
                left = sorted(p.name for p in tmp.iterdir())
                left += sorted(p.name for p in OUT.glob("tracehouse-scratch-*"))  # builders'

                if found or left:
                    failures.append(f"{mode_name} #{n}: {found} leftovers {_described(tmp, left)}")
                diffs += bool(found)
                leftovers += len(left)
                shutil.rmtree(tmp, ignore_errors=True)
                tmp.mkdir()
                if stores.backend == "sqlite":
                    for suffix in ("", "-wal", "-shm", "-journal"):
                        Path(f"{url}{suffix}").unlink(missing_ok=True)
            print(
                f"  kill points {tried} ({killed} killed mid-run), diffs {diffs},"
                f" leftovers {leftovers}"
            )
            for key, value in (
                ("tried", tried),
                ("killed", killed),
                ("diffs", diffs),
                ("leftovers", leftovers),
            ):
                totals[key] += value
        finally:
            stores.drop_all()
            appender.reset()
    print(
        f"\nall modes: {totals['tried']} kill points ({totals['killed']} mid-run),"
        f" {totals['diffs']} diffs, {totals['leftovers']} leftover scratch files"
    )
    for line in failures[:10]:
        print("  " + line)
    ok = totals["tried"] >= 100 and not totals["diffs"] and not totals["leftovers"]
    print("target: ≥ 100 kill points, 0 diffs, 0 leftovers —", "met" if ok else "NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
