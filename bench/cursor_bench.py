"""Reading a Cursor global `state.vscdb` against floors measured in the same run.

    uv run python bench/cursor_bench.py [--composers 300] [--bubbles 60] [--wal]

Builds a C4-shaped global database (composers with their bubbles as rows, ~1.5 KB a bubble),
then prints:
  * floor: a bare `SELECT value` of every row, and the same plus `orjson.loads` of each value;
  * a first parse of the unit (snapshot, every composer decoded and mapped to rows), and a first
    `sync` into a SQLite ledger;
  * a no-change run (the planner's stat), and one new bubble in one composer (the rowid fast
    path), each against the first parse.
With --wal the database is in WAL mode as 2026 builds keep it, held open by its writer: most
pages in the database file, the latest writes in the `-wal`. Every read goes through a private
copy of the files; the new bubble is also read as `sync live` reads it, from a kept copy
refreshed from the `-wal` alone.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import orjson

from tracehouse.parsers import cursor
from tracehouse.parsers.base import ParseOptions
from tracehouse.pipeline.options import SyncOptions
from tracehouse.pipeline.sync import sync
from tracehouse.store.sqlite.store import SqliteStore

SCHEMA = "CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)"


def build(user: Path, composers: int, bubbles: int, wal: bool) -> sqlite3.Connection:
    path = user / "globalStorage" / "state.vscdb"
    path.parent.mkdir(parents=True)
    conn = sqlite3.connect(path, isolation_level=None)
    if wal:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA wal_autocheckpoint=0")  # one checkpoint, after the build
    conn.execute(SCHEMA)
    conn.execute("CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
    conn.execute("BEGIN")
    for c in range(composers):
        cid = f"composer-{c:05d}"
        bids = [f"{cid}-b{b:04d}" for b in range(bubbles)]
        data = {
            "_v": 10,
            "composerId": cid,
            "name": f"task {c}",
            "createdAt": 1_760_000_000_000,
            "fullConversationHeadersOnly": [
                {"bubbleId": b, "type": 1 + i % 2} for i, b in enumerate(bids)
            ],
        }
        conn.execute(
            "INSERT INTO cursorDiskKV VALUES (?, ?)", (f"composerData:{cid}", json.dumps(data))
        )
        for i, bid in enumerate(bids):
            bubble = {
                "_v": 3,
                "bubbleId": bid,
                "type": 1 + i % 2,
                "text": f"bubble {i} of {cid}: " + "lorem ipsum dolor sit amet " * 40,
                "createdAt": "2025-10-01T10:00:00.000Z",
                "tokenCount": {"inputTokens": 10, "outputTokens": 5},
                "relevantFiles": [f"src/{i}.py"],
                "codeBlocks": [],
                "capabilityStatuses": {},
                "context": {"fileSelections": []},
            }
            conn.execute(
                "INSERT INTO cursorDiskKV VALUES (?, ?)",
                (f"bubbleId:{cid}:{bid}", json.dumps(bubble)),
            )
    conn.execute("COMMIT")
    if wal:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("PRAGMA wal_autocheckpoint=1000")  # SQLite's default, as Cursor runs
        # Cursor writes its settings all the time: the WAL is under way before the new bubble
        conn.execute("INSERT INTO ItemTable VALUES ('workbench.panel', '{}')")
    return conn  # kept open: with --wal, closing would fold the WAL into the database


def timed(work):  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    out = work()
    return time.perf_counter() - start, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--composers", type=int, default=300)
    parser.add_argument("--bubbles", type=int, default=60)
    parser.add_argument("--wal", action="store_true")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        user = Path(tmp) / "User"
        writer = build(user, args.composers, args.bubbles, args.wal)
        (unit,) = cursor.discover([user])
        reader = sqlite3.connect(f"file:{unit.key}?mode=ro", uri=True)
        read_s, values = timed(
            lambda: [v for (v,) in reader.execute("SELECT value FROM cursorDiskKV")]
        )
        parse_s, _ = timed(lambda: [orjson.loads(v) for v in values])
        reader.close()
        size = sum(len(v) for v in values)
        options = ParseOptions(now=time.time())
        first_s, result = timed(lambda: cursor.parse(unit, None, options))
        store = SqliteStore(Path(tmp) / "ledger.db")
        sync_s, report = timed(
            lambda: sync(store, SyncOptions(sources={"cursor": [user]}, workers=0))
        )
        plan_s, planned = timed(lambda: cursor.plan_unit(unit, result.cursor, False))

        cursor_state = {
            **(result.cursor or {}),
            "state": result.watermark.state if result.watermark else {},
        }
        kept = replace(options, scratch=str(Path(tmp) / "kept"))
        cursor.parse(unit, cursor_state, kept)  # the watcher's first copy, before the change

        data = json.loads(
            writer.execute(
                "SELECT value FROM cursorDiskKV WHERE key = 'composerData:composer-00007'"
            ).fetchone()[0]
        )
        data["fullConversationHeadersOnly"].append({"bubbleId": "new", "type": 1})
        writer.execute(
            "INSERT INTO cursorDiskKV VALUES ('bubbleId:composer-00007:new', ?)",
            (json.dumps({"_v": 3, "bubbleId": "new", "type": 1, "text": "one more"}),),
        )
        writer.execute(
            "INSERT INTO cursorDiskKV VALUES ('composerData:composer-00007', ?)",
            (json.dumps(data),),
        )
        append_s, appended = timed(lambda: cursor.parse(unit, cursor_state, options))
        kept_s, from_kept = timed(lambda: cursor.parse(unit, cursor_state, kept))
        assert from_kept.rows == appended.rows
        store.close()
        writer.close()

    mb = size / 1e6
    print(
        f"database {mb:.1f} MB of values, {args.composers} composers x {args.bubbles} bubbles"
        f"{' (WAL mode: read through a private copy)' if args.wal else ''}"
    )
    print(f"floor   bare SELECT value        {mb / read_s:8.1f} MB/s  ({read_s:.2f}s)")
    floor_s = read_s + parse_s
    print(f"floor   + orjson.loads each      {mb / floor_s:8.1f} MB/s  ({floor_s:.2f}s)")
    print(
        f"parse   first read of the unit   {mb / first_s:8.1f} MB/s  ({first_s:.2f}s)"
        f"  = {floor_s / first_s:.0%} of the read+parse floor;"
        f" {len(result.extra)} sessions"
    )
    print(
        f"sync    first sync into SQLite   {mb / sync_s:8.1f} MB/s  ({sync_s:.2f}s);"
        f" {report.rows_written:,} rows written"
    )
    print(f"plan    no change (stat only)    {plan_s * 1000:8.2f} ms   skipped: {planned is None}")
    print(
        f"parse   one new bubble           {append_s * 1000:8.1f} ms   = {first_s / append_s:.0f}x"
        f" faster than the first read; {len(appended.extra)} session re-read"
    )
    if args.wal:
        print(
            f"parse   one new bubble, kept copy {kept_s * 1000:7.1f} ms   = {first_s / kept_s:.0f}x"
            " faster than the first read (sync live: only the -wal is copied)"
        )


if __name__ == "__main__":
    main()
