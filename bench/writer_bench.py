"""The SQLite writer's ceiling: how fast one writer takes batches that are already parsed.

    uv run python bench/writer_bench.py [--copies 24] [--repeat 3] [--corpus ../shared/fixtures]

On a machine with many cores the parsers outrun SQLite's one writer (issue #46), so a backfill
goes no faster than this, whatever the number of workers. The bench measures it where there are
only two cores: it parses the bench corpus (`bench/corpus.py`) once, inline, and spools every
batch as the parsers hand it over (with the unspaced-script hint they work out), then writes the
spool into a new ledger the way a backfill's writer does — groups of GROUP_BYTES of source, each
one `import_group` — `--repeat` times in each way, interleaved:

  first load    an empty ledger nobody else has open: a rollback journal (`begin_first_load`)
  builders      the same, its two large search indexes built beside the writer by processes
                of their own and adopted at the end (`search/sqlite_builders.py`: 4 cores or more)
  WAL           the same as the first, with a reader holding the ledger open, which keeps it
                in WAL mode with checkpoints beside the writer (how every load was written before)

Printed per way: the writer's MB/s of source (median and range), its phases (index, commit,
and beside it checkpoint and build; adopt: copying the built indexes in), the writer process's
own CPU seconds, bytes written to disk against the bytes read, and the floor of the same run:
unpickling the spool (which the real writer does too, as "wait"). On two cores the builders
share the writer's second core; with cores to spare a writer runs at about its CPU seconds (the
builders keep up: each spends a fraction of the writer's time).
"""

from __future__ import annotations

import argparse
import pickle
import resource
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import psutil

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from corpus import build  # noqa: E402

from tracehouse.config import load_settings  # noqa: E402
from tracehouse.pipeline import sync as sync_module  # noqa: E402
from tracehouse.pipeline.ingest import Ready  # noqa: E402
from tracehouse.pipeline.sources import sync_options  # noqa: E402
from tracehouse.pipeline.workers import GROUP_BYTES  # noqa: E402
from tracehouse.store.protocol import RunTotals  # noqa: E402
from tracehouse.store.sqlite.binds import for_writer  # noqa: E402
from tracehouse.store.sqlite.store import SqliteStore  # noqa: E402


def spool(corpus: Path, into: Path, scratch: Path) -> int:
    """Parse the corpus inline into a scratch ledger, pickling each batch (and the source bytes
    it came from) into `into` as the writer would receive it; returns the bytes read."""
    settings = load_settings(corpus / "sources.toml", env={})
    options = replace(sync_options(settings), workers=1)
    store = SqliteStore(scratch)
    real_commit = sync_module.commit
    total = 0
    with into.open("wb") as out:

        def keep(write, ready: Ready, report) -> None:  # type: ignore[no-untyped-def]
            nonlocal total
            if ready.batch is not None:
                sent = for_writer(ready.batch)  # as a parser process sends it
                pickle.dump((ready.bytes_read, sent), out, protocol=pickle.HIGHEST_PROTOCOL)
                total += ready.bytes_read
            real_commit(write, ready, report)

        sync_module.commit = keep  # type: ignore[assignment]
        try:
            sync_module.sync(store, options)
        finally:
            sync_module.commit = real_commit
            store.close()
    return total


def batches(path: Path) -> Iterator[tuple[int, object]]:
    with path.open("rb") as f:
        while True:
            try:
                yield pickle.load(f)
            except EOFError:
                return


def unpickle_floor(path: Path) -> float:
    began = time.perf_counter()
    for _ in batches(path):
        pass
    return time.perf_counter() - began


def write_all(path: Path, ledger: Path, *, wal: bool, builders: bool = False) -> dict[str, float]:
    """Write the spool as a backfill's writer does; seconds spent, less unpickling."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(f"{ledger}{suffix}").unlink(missing_ok=True)
    store = SqliteStore(ledger)
    reader = None
    if wal:  # another connection with the ledger open: the load stays in WAL mode
        reader = sqlite3.connect(ledger)
        reader.execute("SELECT count(*) FROM sessions").fetchone()
    io_before = psutil.Process().io_counters().write_bytes
    cpu_before = _cpu()
    spent = unpickling = 0.0
    try:
        store.start_run("bench", "backfill")
        feed = batches(path)
        more = True
        while more:
            size = 0
            began = time.perf_counter()
            with store.import_group(builders=builders) as write:
                while size < GROUP_BYTES:
                    got = time.perf_counter()
                    item = next(feed, None)
                    unpickling += time.perf_counter() - got
                    if item is None:
                        more = False
                        break
                    read, batch = item
                    write(batch)
                    size += read
            spent += time.perf_counter() - began
        store.finish_run("bench", RunTotals())
    finally:
        if reader is not None:
            reader.close()
        began = time.perf_counter()
        store.close()  # the checkpoint still under way, in WAL mode
        spent += time.perf_counter() - began
    timings = dict(store.timings)
    return {
        "total": spent - unpickling,
        "cpu": _cpu() - cpu_before - unpickling,
        **{k: timings.get(k, 0.0) for k in ("index", "commit", "checkpoint", "build", "adopt")},
        "written": float(psutil.Process().io_counters().write_bytes - io_before),
    }


def _cpu() -> float:
    """This process's CPU seconds, user and system (not its children's: the builders')."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=24)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--corpus", type=Path, default=HERE.parent.parent / "shared" / "fixtures")
    args = parser.parse_args()
    if args.copies < 1 or args.repeat < 1:
        raise SystemExit("--copies and --repeat must be at least 1")
    corpus = build(args.corpus.resolve(), args.copies, HERE / "out" / "corpus")
    with tempfile.TemporaryDirectory(prefix="writer-bench-", dir=HERE / "out") as scratch:
        work = Path(scratch)
        began = time.perf_counter()
        read = spool(corpus, work / "spool.pickle", work / "parse.db")
        mb = read / 1e6
        print(
            f"spool    {mb:,.0f} MB of source parsed into batches"
            f" in {time.perf_counter() - began:.1f}s"
        )
        floors = []
        runs: dict[str, list[dict[str, float]]] = {"first load": [], "builders": [], "WAL": []}
        for _ in range(args.repeat):
            floors.append(unpickle_floor(work / "spool.pickle"))
            for way in runs:
                runs[way].append(
                    write_all(
                        work / "spool.pickle",
                        work / "ledger.db",
                        wal=way == "WAL",
                        builders=way == "builders",
                    )
                )
        floor = statistics.median(floors)
        print(
            f"floor    unpickling the spool {floor:.2f}s = {mb / floor:,.0f} MB/s"
            f" (median of {args.repeat})"
        )
        for way, done in runs.items():
            speeds = [mb / r["total"] for r in done]
            middle = sorted(done, key=lambda r: r["total"])[(len(done) - 1) // 2]
            phases = ", ".join(
                f"{k} {middle[k]:.1f}s"
                for k in ("index", "commit", "checkpoint", "build", "adopt")
                if middle[k]
            )
            cpu = [mb / r["cpu"] for r in done]
            print(
                f"writer   {way:10} {statistics.median(speeds):6.0f} MB/s"
                f" (range {min(speeds):.0f}–{max(speeds):.0f})  {middle['total']:.1f}s: {phases};"
                f" its own CPU {middle['cpu']:.1f}s = {statistics.median(cpu):.0f} MB/s"
                f" (range {min(cpu):.0f}–{max(cpu):.0f});"
                f" written {middle['written'] / read:.2f}x read"
            )


if __name__ == "__main__":
    main()
