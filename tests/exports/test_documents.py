"""`export` as Markdown, HTML, JSONL and OTLP JSON, on both backends: the Markdown log keeps
its structure whatever the messages hold, JSONL re-imports into the same rows, OTLP parses
against the protocol's own schema, and `--since-last` writes only what changed."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.conftest import DATA
from tests.exports.checks import markdown_structure_holds, parse_otlp_line, same_rows
from tests.store.factory import batch, item
from tracehouse.errors import ConfigError
from tracehouse.exports.documents import DocumentOptions, export_documents
from tracehouse.pipeline.options import SyncOptions
from tracehouse.pipeline.requests import apply_item_lines
from tracehouse.pipeline.sync import sync
from tracehouse.reports.filters import SessionFilters, build_session_filters
from tracehouse.store.sqlite.store import SqliteStore

HOSTILE = (
    "# Not a heading of the log\n\nSetext title\n===\n\n```python\nprint(1)\n```\n\n"
    "</details><details open>\n| a | b |\n> quoted\n---\n````\nfour\n````"
)


@pytest.fixture
def ledger(store):  # type: ignore[no-untyped-def]
    sources = {
        "claude-code": [DATA / "claude" / "home" / ".claude"],
        "codex": [DATA / "codex" / "home" / ".codex"],
    }
    assert sync(store, SyncOptions(sources=sources)).ok
    store.import_batch(batch([item("hostile", 4, text=HOSTILE)]))
    return store


def export(store, out: Path, fmt: str, **options):  # type: ignore[no-untyped-def]
    filters = options.pop("filters", SessionFilters())
    return export_documents(store, out, DocumentOptions(fmt, **options), filters)


def test_markdown_keeps_one_heading_per_message(ledger, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    report = export(ledger, tmp_path, "markdown")
    sessions = ledger.query("SELECT session_id, label, parent_session_id FROM sessions")
    assert report.written == len(sessions) == len(list(tmp_path.glob("*.md")))
    for s in sessions:
        markdown_structure_holds(ledger, tmp_path / f"{s['label']}.md", s["session_id"])
    hostile = (tmp_path / "cc-hostile.md").read_text()
    assert "`````text\n# Not a heading" in hostile  # fenced past the longest inner fence
    child = next(s for s in sessions if s["parent_session_id"])
    parent = next(s for s in sessions if s["session_id"] == child["parent_session_id"])
    # A subagent is a link from its spawning call, and links back to its parent.
    assert f"]({child['label']}.md)" in (tmp_path / f"{parent['label']}.md").read_text()
    assert (
        f"[{parent['label']}]({parent['label']}.md)"
        in (tmp_path / f"{child['label']}.md").read_text()
    )


def test_markdown_headings_carry_attribution(ledger, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    export(ledger, tmp_path, "markdown")
    headings = [
        line
        for path in tmp_path.glob("*.md")
        for line in path.read_text().splitlines()
        if line.startswith("## ")
    ]
    assert any(h.startswith("## User (from cc-") and " via " in h for h in headings), headings
    assert any(h.startswith("## Notice") for h in headings)


def test_context_leaves_out_what_the_model_never_saw(ledger, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    export(ledger, tmp_path / "all", "markdown")
    export(ledger, tmp_path / "seen", "markdown", context_only=True)
    everything = "".join(p.read_text() for p in (tmp_path / "all").glob("*.md"))
    seen = "".join(p.read_text() for p in (tmp_path / "seen").glob("*.md"))
    assert "## Notice" in everything and "## Notice" not in seen
    assert seen.count("## User") == everything.count("## User")


def test_html_pages_nest_subagents_and_escape_text(ledger, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    report = export(ledger, tmp_path, "html")
    assert tmp_path / "index.html" in report.files
    hostile = (tmp_path / "cc-hostile.html").read_text()
    assert (
        "&lt;/details&gt;&lt;details open&gt;" in hostile
        and "</details><details open>\n" not in hostile
    )
    child = ledger.query("SELECT label, parent_session_id FROM sessions WHERE is_subagent")[0]
    parent = ledger.query(
        "SELECT label FROM sessions WHERE session_id = ?", [child["parent_session_id"]]
    )[0]
    page = (tmp_path / f"{parent['label']}.html").read_text()
    assert 'class="subagent"' in page and f'href="{child["label"]}.html"' in page
    index = (tmp_path / "index.html").read_text()
    assert index.count("<tr data-provider=") == report.selected
    assert "http" not in index.split("<body>")[0]  # nothing fetched from a network


def test_jsonl_reimports_into_the_same_rows(ledger, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    report = export(ledger, tmp_path, "jsonl")
    (path,) = report.files
    lines = path.read_bytes().splitlines()
    assert len(lines) == report.written
    copy = SqliteStore(tmp_path / "copy.db")
    response = apply_item_lines(copy, path.read_bytes())
    assert response.count("imported") == len(lines), response.results
    same_rows(ledger, copy)
    again = apply_item_lines(copy, path.read_bytes())  # the same file again changes nothing
    assert again.count("skipped") == len(lines)
    copy.close()


def test_a_bad_jsonl_line_fails_alone_by_its_line_number(tmp_path: Path) -> None:
    good = orjson.dumps(batch_item("fine"))
    data = b"\n".join([good, b"{not json", orjson.dumps({"sourceProvider": "claude-code"})])
    store = SqliteStore(tmp_path / "l.db")
    response = apply_item_lines(store, data)
    reasons = [r.reason for r in response.results if r.status == "failed"]
    assert response.count("imported") == 1
    assert reasons[0].startswith("line 2: not JSON") and reasons[1].startswith("line 3: ")
    store.close()


def batch_item(sid: str) -> dict:  # type: ignore[type-arg]
    raw = item(sid)
    raw.pop("sources")
    return raw


def test_otel_traces_parse_against_the_otlp_schema(ledger, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (path,) = export(ledger, tmp_path, "otel").files
    turns = {r["session_id"]: r["n"] for r in ledger.query(
        "SELECT session_id, count(*) AS n FROM turns GROUP BY 1")}  # fmt: skip
    calls = {r["session_id"]: r["n"] for r in ledger.query(
        "SELECT session_id, count(*) AS n FROM tool_calls GROUP BY 1")}  # fmt: skip
    traces = set()
    for line in path.read_bytes().splitlines():
        message = parse_otlp_line(line)
        spans = message.resource_spans[0].scope_spans[0].spans
        root = spans[0]
        attrs = {a.key: a.value for a in root.attributes}
        session_id = attrs["tracehouse.session.id"].string_value
        assert len(spans) == 1 + turns.get(session_id, 0) + calls.get(session_id, 0)
        assert {s.trace_id for s in spans} == {root.trace_id}
        traces.add(root.trace_id)
        for span in spans[1:]:
            kind = {a.key: a.value.string_value for a in span.attributes}["gen_ai.operation.name"]
            assert kind in ("chat", "execute_tool") and span.name.startswith(
                "chat " if kind == "chat" else "execute_tool "
            )
    assert len(traces) == len(ledger.query("SELECT session_id FROM sessions"))


def test_otel_input_counts_every_input_token(store, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    claude = item("c", 2)
    claude["turns"][0].update(inputTokens=115, cachedInputTokens=100, cacheWriteTokens=5)
    codex = item("x", 2)
    codex["sourceProvider"] = "codex"
    codex["turns"][0].update(inputTokens=110, cachedInputTokens=100)
    store.import_batch(batch([claude, codex]))
    (path,) = export(store, tmp_path, "otel").files
    inputs = {}
    for line in path.read_bytes().splitlines():
        spans = parse_otlp_line(line).resource_spans[0].scope_spans[0].spans
        chat = next(s for s in spans if s.name.startswith("chat"))
        attrs = {a.key: a.value.int_value for a in chat.attributes}
        inputs[spans[0].name] = (attrs["gen_ai.usage.input_tokens"],
                                 attrs["gen_ai.usage.cache_read.input_tokens"])  # fmt: skip
    assert inputs == {"invoke_agent claude-code": (115, 100), "invoke_agent codex": (110, 100)}


@pytest.mark.parametrize("fmt", ["markdown", "jsonl"])
def test_since_last_writes_only_what_changed(store, tmp_path: Path, fmt: str) -> None:  # type: ignore[no-untyped-def]
    store.import_batch(batch([item("a"), item("b"), item("c")]))
    first = export(store, tmp_path, fmt, since_last=True)
    assert (first.written, first.since) == (3, None)
    second = export(store, tmp_path, fmt, since_last=True)
    assert second.written == 0 and second.since is not None
    store.import_batch(batch([item("b", 5)]))  # b changed
    third = export(store, tmp_path, fmt, since_last=True)
    assert third.written == 1
    if fmt == "jsonl":  # each incremental export adds a file; the earlier ones stay
        assert len(list(tmp_path.glob("sessions-*.jsonl"))) == 2  # nothing changed: no file
        newest = max(tmp_path.glob("sessions-*.jsonl"))
        assert orjson.loads(newest.read_bytes())["sourceSessionId"] == "b"
    # Another format to the same directory keeps a mark of its own.
    assert export(store, tmp_path, "html", since_last=True).written == 3


def test_since_last_rewrites_the_parent_of_a_changed_subagent(store, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    parent = item("p")
    child = item("k", isSubagent=True, parentSourceSessionId="p")
    store.import_batch(batch([parent, child, item("other")]))
    export(store, tmp_path, "html", since_last=True)
    store.import_batch(batch([item("k", 5, isSubagent=True, parentSourceSessionId="p")]))
    again = export(store, tmp_path, "html", since_last=True)
    assert sorted(p.name for p in again.files) == ["cc-k.html", "cc-p.html", "index.html"]


def test_filters_choose_the_sessions(ledger, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    filters = build_session_filters(providers=["codex"])
    report = export(ledger, tmp_path, "markdown", filters=filters)
    codex = ledger.query("SELECT label FROM sessions WHERE source_provider = 'codex'")
    assert sorted(p.stem for p in tmp_path.glob("*.md")) == sorted(r["label"] for r in codex)
    assert report.selected == len(codex)


def test_options_are_checked_where_they_enter() -> None:
    with pytest.raises(ConfigError, match="--format 'pdf'"):
        DocumentOptions("pdf")
    with pytest.raises(ConfigError, match="--context"):
        DocumentOptions("jsonl", context_only=True)


def test_colliding_labels_get_files_of_their_own() -> None:
    from tracehouse.exports.selection import file_stems

    rows = [
        {"session_id": "ses_aaaa1111bbbb", "label": "cc-12345678"},
        {"session_id": "ses_cccc2222dddd", "label": "cc-12345678"},
        {"session_id": "ses_eeee3333ffff", "label": "../x"},
    ]
    assert file_stems(rows) == {
        "ses_aaaa1111bbbb": "cc-12345678-aaaa1111",
        "ses_cccc2222dddd": "cc-12345678-cccc2222",
        "ses_eeee3333ffff": "_x",
    }
