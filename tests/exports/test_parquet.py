"""`export --format parquet` opened with pyarrow: every table, its row count and its column types
are the ledger's, on both backends; a filter keeps its sessions' rows only."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from tests.store.factory import batch, item
from tracehouse.exports.parquet import EXPORTED, export_parquet, schema, sessions_of
from tracehouse.model.columns import Kind
from tracehouse.model.tables import TABLES_BY_NAME
from tracehouse.reports.filters import build_session_filters, session_sql
from tracehouse.timespec import parse_stored

TIME = pa.timestamp("us", tz="UTC")
ARROW = {
    Kind.TEXT: pa.string(),
    Kind.INT: pa.int64(),
    Kind.BOOL: pa.bool_(),
    Kind.JSON: pa.string(),
}


def test_every_table_round_trips(store, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    codex = item("x", 3, model="gpt-5.4")
    codex["sourceProvider"] = "codex"
    store.import_batch(batch([item("a", 4, isSubagent=True), item("b", 2), codex]))
    written = export_parquet(store, tmp_path / "out")
    assert [w.table for w in written] == [t.name for t in EXPORTED]
    counts = store.info().row_counts
    for w in written:
        table = pq.read_table(w.path)
        spec = TABLES_BY_NAME[w.table]
        assert table.num_rows == w.rows == counts.get(w.table, 0), w.table
        assert table.schema.names == list(spec.names)
        assert [f.type for f in table.schema] == [
            TIME if c.name.endswith("_at") and c.kind is Kind.TEXT else ARROW[c.kind]
            for c in spec.columns
        ]
        assert table.schema == schema(spec)
    sessions = pq.read_table(tmp_path / "out" / "sessions.parquet").to_pylist()
    assert [s["is_subagent"] for s in sessions].count(True) == 1
    messages = pq.read_table(tmp_path / "out" / "messages.parquet").to_pylist()
    by_id = {r["message_id"]: r for r in store.rows("messages")}
    for row in messages:  # JSON columns as the JSON text of the ledger's values
        assert row["content"] == by_id[row["message_id"]]["content"]
        assert row["meta"] is not None and row["meta"].startswith("{")
        stored = parse_stored(by_id[row["message_id"]]["created_at"], utc=True)
        assert row["created_at"] == stored  # a time, not its text (issue #44)


def test_a_filter_keeps_its_sessions_rows(store, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    codex = item("x", 3)
    codex["sourceProvider"] = "codex"
    store.import_batch(batch([item("a", 4), codex]))
    wanted = sessions_of(store, *session_sql(build_session_filters(providers=["codex"])))
    export_parquet(store, tmp_path, session_ids=wanted)
    sessions = pq.read_table(tmp_path / "sessions.parquet").to_pylist()
    assert [s["source_provider"] for s in sessions] == ["codex"]
    assert pq.read_table(tmp_path / "messages.parquet").num_rows == 3
    assert not list(tmp_path.glob("*.partial"))
