"""import_batch throughput against a bare executemany floor, measured in the same run.

    uv run python bench/import_bench.py [--messages 200000] [--per-session 100] [--repeat 3]

Builds ~200k synthetic messages across many sessions as in-process batches (polars frames, the
parsers' form), then prints:
  * floor: a bare `executemany` of the very same rows into empty tables with the same columns and
    primary keys, one transaction, no ON CONFLICT;
  * first import through `SessionStore.import_batch` (rows/s and the ratio to the floor);
  * a no-change re-import (rows offered/s and the ratio to the first import).
  * a second floor: the same executemany into a new ledger's own tables, with their indexes,
    and its search index brought up to date before each commit: what the ledger's schema
    costs, apart from what import_batch does on top of it (upserts, lineage, labels, history);
Targets (issue #2): first import ≥ 50% of the floor; no-change re-import ≥ 3× the first import.
(Issue #20: ≥ 80% of the bare floor.)
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import tempfile
import time
import uuid
from pathlib import Path

from tracehouse.model import ids
from tracehouse.model.contract import ImportBatch, ImportItem
from tracehouse.model.fingerprint import combine
from tracehouse.model.rows import TableBuffer, row_fingerprint
from tracehouse.model.tables import CONTENT_TABLES, MESSAGES, SESSIONS, TOOL_CALLS, TURNS
from tracehouse.search import sqlite_index
from tracehouse.store.protocol import SessionStore
from tracehouse.store.sqlite.connection import apply_pragmas
from tracehouse.store.sqlite.migrations import create_table_sql
from tracehouse.store.sqlite.store import SqliteStore

BATCH_SESSIONS = 200


def build_batches(n_messages: int, per_session: int) -> list[ImportBatch]:
    batches = []
    n_sessions = n_messages // per_session
    for start in range(0, n_sessions, BATCH_SESSIONS):
        buffers = {t.name: TableBuffer(t) for t in (TURNS, MESSAGES, TOOL_CALLS)}
        items = []
        for s in range(start, min(start + BATCH_SESSIONS, n_sessions)):
            # A uuid, as real session ids are: labels are cut from an id's head, and numbered
            # ids would put every session under one label, whose work grows with the group.
            sid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"tracehouse-bench-{s}"))
            session_id = ids.session_id("claude-code", sid)
            for m in range(per_session):
                turn = m // 4
                buffers["messages"].add(
                    {
                        "message_id": ids.message_id("claude-code", sid, f"u{m}"),
                        "session_id": session_id,
                        "turn_id": ids.turn_id("claude-code", sid, f"t{turn}"),
                        "source_message_id": f"u{m}",
                        "seq": m,
                        "role": "user" if m % 2 == 0 else "assistant",
                        "message_type": "user" if m % 2 == 0 else "assistant",
                        "content": f"message {m} of {sid}: " + "lorem ipsum dolor sit amet " * 12,
                        "created_at": "2026-01-01T00:00:00.000Z",
                        "metadata": {"n": m},
                        "source_ref": f"{sid}.jsonl:{m * 900}",
                    }
                )
                if m % 4 == 0:
                    buffers["turns"].add(
                        {
                            "turn_id": ids.turn_id("claude-code", sid, f"t{turn}"),
                            "session_id": session_id,
                            # Each turn continues the one before, as the parsers chain them:
                            # one thread a session, as in real ledgers (unchained, every turn
                            # was a thread of its own, 25 thread rows a session to write).
                            "parent_turn_id": ids.turn_id("claude-code", sid, f"t{turn - 1}")
                            if turn
                            else None,
                            "seq": turn,
                            "status": "completed",
                            "input_tokens": 100,
                            "output_tokens": 50,
                            "total_tokens": 150,
                        }
                    )
                if m % 2 == 1:
                    buffers["tool_calls"].add(
                        {
                            "tool_call_id": ids.tool_call_id("claude-code", sid, f"c{m}"),
                            "session_id": session_id,
                            "seq": m,
                            "tool_name": "Read",
                            "params": {"file_path": f"/src/{m}.py"},
                            "result": "ok " * 40,
                            "status": "completed",
                        }
                    )
            session = {
                "session_id": session_id,
                "source_provider": "claude-code",
                "source_session_id": sid,
                "label": ids.session_label("claude-code", sid),
                "title": sid,
                "message_count": per_session,
            }
            fp = combine([row_fingerprint(SESSIONS, session), sid])
            items.append(ImportItem("claude-code", sid, fp, 0, {**session, "fingerprint": fp}))
        frames = {name: buf.frame() for name, buf in buffers.items()}
        batches.append(ImportBatch(items=tuple(items), frames=frames))
    return batches


def rows_in(batches: list[ImportBatch]) -> int:
    return sum(len(b.items) + sum(f.height for f in b.frames.values()) for b in batches)


def bare_floor(batches: list[ImportBatch], path: Path) -> float:
    conn = sqlite3.connect(path, isolation_level=None)
    apply_pragmas(conn)  # the store's own settings
    for table in (SESSIONS, *CONTENT_TABLES.values()):
        conn.execute(create_table_sql(table))
    try:
        return _insert(conn, batches, flush=False)
    finally:
        conn.close()


def ledger_floor(batches: list[ImportBatch], path: Path) -> float:
    """The bare floor's inserts into a ledger's own tables, its search index flushed per batch."""
    store = SqliteStore(path)
    try:
        return _insert(store.conn, batches, flush=True)
    finally:
        store.close()


def _insert(conn: sqlite3.Connection, batches: list[ImportBatch], *, flush: bool) -> float:
    """Seconds to executemany every batch's rows, a transaction per batch; with `flush`, the
    search index is brought up to date before each commit."""
    statements = [
        (t, f"INSERT INTO {t.name} ({', '.join(t.names)}) VALUES ({', '.join('?' * len(t.names))})")
        for t in (SESSIONS, *CONTENT_TABLES.values())
    ]
    start = time.perf_counter()
    for batch in batches:
        conn.execute("BEGIN")
        for table, sql in statements:
            if table is SESSIONS:
                rows = [[i.session.get(n) for n in SESSIONS.names] for i in batch.items]
            else:
                rows = batch.frame(table.name).rows()
            conn.executemany(sql, rows)
        if flush:
            sqlite_index.flush(conn)
        conn.execute("COMMIT")
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=200_000)
    parser.add_argument("--per-session", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    t0 = time.perf_counter()
    batches = build_batches(args.messages, args.per_session)
    n_rows = rows_in(batches)
    print(f"built {len(batches)} batches, {n_rows:,} rows in {time.perf_counter() - t0:.1f}s")

    floors, schemas, firsts, agains = [], [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        for n in range(args.repeat):  # interleaved: a noisy minute hits all three alike
            floors.append(bare_floor(batches, Path(tmp) / f"floor{n}.db"))
            schemas.append(ledger_floor(batches, Path(tmp) / f"schema{n}.db"))
            first_s, again_s, skipped = time_imports(
                SqliteStore(Path(tmp) / f"ledger{n}.db"), batches
            )
            firsts.append(first_s)
            agains.append(again_s)

    floor_s, schema_s, first_s = map(statistics.median, (floors, schemas, firsts))
    print(f"(medians of {args.repeat} interleaved runs)")
    print_figures("bare executemany", n_rows, floor_s, first_s, statistics.median(agains), skipped)
    ratios = sorted(f / i for f, i in zip(floors, firsts, strict=True))
    shown = " ".join(f"{r:.0%}" for r in ratios)
    print(f"        first import_batch / bare floor per run: {shown}")
    print(
        f"floor   into the ledger's tables  {n_rows / schema_s:>8,.0f} rows/s  ({schema_s:.2f}s)"
        f"  = {floor_s / schema_s:.0%} of the bare floor (indexes, search index);"
        f" first import_batch = {schema_s / first_s:.0%} of it"
    )


def time_imports(store: SessionStore, batches: list[ImportBatch]) -> tuple[float, float, int]:
    """Seconds for the first import of every batch, for the same again, and sessions skipped
    the second time; the store is closed afterwards."""
    start = time.perf_counter()
    for batch in batches:
        store.import_batch(batch)
    first_s = time.perf_counter() - start
    start = time.perf_counter()
    skipped = sum(store.import_batch(b).count("skipped") for b in batches)
    again_s = time.perf_counter() - start
    store.close()
    return first_s, again_s, skipped


def print_figures(
    floor_label: str, n_rows: int, floor_s: float, first_s: float, again_s: float, skipped: int
) -> None:
    """The floor, the first import against it, and the no-change re-import against the first."""
    floor, first, again = n_rows / floor_s, n_rows / first_s, n_rows / again_s
    print(f"floor   {floor_label:<21} {floor:>12,.0f} rows/s  ({floor_s:.2f}s)")
    print(
        f"import  first import_batch    {first:>12,.0f} rows/s  ({first_s:.2f}s)"
        f"  = {first / floor:.0%} of floor (target ≥ 50%)"
    )
    print(
        f"import  no-change re-import   {again:>12,.0f} rows/s  ({again_s:.2f}s)"
        f"  = {again / first:.1f}x first import (target ≥ 3x); {skipped:,} sessions skipped"
    )


if __name__ == "__main__":
    main()
