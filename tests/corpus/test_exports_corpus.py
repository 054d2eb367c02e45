"""Every export format on the real logs of all three tools: each Markdown log keeps one heading
per message, the JSONL export re-imports into the same rows, every OTLP line parses against
the protocol's schema, and every session gets an HTML page."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.corpus.test_claude_corpus import claude_homes
from tests.corpus.test_codex_corpus import codex_homes
from tests.corpus.test_cursor_corpus import user_dirs
from tests.exports.checks import markdown_structure_holds, parse_otlp_line, same_rows
from tracehouse.exports.documents import DocumentOptions, export_documents
from tracehouse.pipeline.options import SyncOptions
from tracehouse.pipeline.requests import apply_item_lines
from tracehouse.pipeline.sync import sync
from tracehouse.reports.filters import SessionFilters
from tracehouse.store.sqlite.store import SqliteStore

pytestmark = pytest.mark.corpus


@pytest.fixture(scope="module")
def ledger(corpus: Path, tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    store = SqliteStore(tmp_path_factory.mktemp("exports") / "ledger.db")
    sources = {
        "claude-code": claude_homes(corpus),
        "codex": codex_homes(corpus),
        "cursor": user_dirs(corpus),
    }
    assert sync(store, SyncOptions(sources=sources)).ok
    yield store
    store.close()


def export(store: SqliteStore, out: Path, fmt: str):  # type: ignore[no-untyped-def]
    return export_documents(store, out, DocumentOptions(fmt), SessionFilters())


def test_every_markdown_log_keeps_its_structure(ledger, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    report = export(ledger, tmp_path, "markdown")
    sessions = ledger.query("SELECT session_id, label FROM sessions")
    assert report.written == len(sessions) > 100
    stems = {p.stem for p in tmp_path.glob("*.md")}
    assert len(stems) == len(sessions)
    for s in sessions:
        path = next(tmp_path.glob(f"{s['label']}*.md"))
        markdown_structure_holds(ledger, path, s["session_id"])


def test_jsonl_reimports_every_session_unchanged(ledger, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (path,) = export(ledger, tmp_path, "jsonl").files
    copy = SqliteStore(tmp_path / "copy.db")
    response = apply_item_lines(copy, path.read_bytes())
    assert response.ok, [r.reason for r in response.results if r.status == "failed"][:3]
    same_rows(ledger, copy)
    copy.close()


def test_every_trace_parses_against_the_otlp_schema(ledger, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (path,) = export(ledger, tmp_path, "otel").files
    lines = path.read_bytes().splitlines()
    spans = sum(len(parse_otlp_line(line).resource_spans[0].scope_spans[0].spans) for line in lines)
    counts = ledger.info().row_counts
    assert len(lines) == counts["sessions"]
    assert spans == counts["sessions"] + counts["turns"] + counts["tool_calls"]


def test_every_session_gets_a_page(ledger, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    report = export(ledger, tmp_path, "html")
    assert len(list(tmp_path.glob("*.html"))) == report.selected + 1  # and the index
    index = (tmp_path / "index.html").read_text()
    assert index.count("<tr data-provider=") == report.selected
