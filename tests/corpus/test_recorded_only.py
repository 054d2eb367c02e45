"""On a ledger of every fixture home, nothing the agents did not record is made up: no token
count that is a stand-in 0, no file time as a conversation's, no trace span at Unix time 0."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from tracehouse.cli.app import app
from tracehouse.model.tables import TOKEN_COLUMNS
from tracehouse.store.sqlite.store import SqliteStore

pytestmark = pytest.mark.corpus


def test_no_count_or_time_is_made_up(all_homes_ledger: Path) -> None:
    store = SqliteStore(all_homes_ledger, migrate=False)
    try:
        zero = " AND ".join(f"{c} = 0" for c in TOKEN_COLUMNS)
        assert store.query(f"SELECT count(*) AS n FROM turns WHERE {zero}")[0]["n"] == 0
        assert store.query(f"SELECT count(*) AS n FROM sessions WHERE {zero}")[0]["n"] == 0
        unrecorded = store.query(
            "SELECT count(*) AS n FROM sessions WHERE source_provider = 'cursor-agent'"
            " AND total_tokens IS NULL"
        )[0]["n"]
        assert unrecorded > 0
        transcripts = store.query(
            "SELECT updated_at, metadata FROM sessions WHERE source_provider = 'cursor-agent'"
            " AND source_path NOT LIKE '%store.db'"
        )
        assert transcripts
        for row in transcripts:
            assert row["updated_at"] is None
            assert orjson.loads(row["metadata"])["times"] == "none recorded"
    finally:
        store.close()


def test_no_trace_span_starts_at_unix_time_zero(all_homes_ledger: Path, tmp_path: Path) -> None:
    out = tmp_path / "otel"
    args = ["export", "--format", "otel", "--out", str(out), "--store", str(all_homes_ledger)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    spans = 0
    for line in (out / "traces.jsonl").read_bytes().splitlines():
        for resource in orjson.loads(line)["resourceSpans"]:
            for scope in resource["scopeSpans"]:
                for span in scope["spans"]:
                    spans += 1
                    assert int(span["startTimeUnixNano"]) > 0, span["name"]
    assert spans > 1000
