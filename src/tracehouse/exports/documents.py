"""`export` in the formats that write sessions one by one (Markdown, HTML, JSONL, OTLP JSON,
`sessions.import` requests).

Sessions are read one at a time (`session_detail`) and written as they are rendered, so memory
stays that of the largest session whatever the ledger's size.

`--since-last` keeps, in the ledger's `export_marks`, when each directory last received each
format; the next export to it writes only the sessions imported or changed since then, plus
the sessions above them (a parent's page shows its subagents). The mark is taken when the
export starts, so a session imported while it runs is written again next time, never lost.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import orjson

from tracehouse.errors import ConfigError
from tracehouse.exports.selection import (
    FILE_MODE,
    file_stems,
    make_out,
    select_sessions,
    whole_file,
    write_whole,
)
from tracehouse.model.contract import now_iso
from tracehouse.redaction.rows import ExportTally, redact_detail
from tracehouse.reports.filters import SessionFilters
from tracehouse.store.protocol import SessionStore
from tracehouse.store.reads import session_detail
from tracehouse.timespec import local_time

if TYPE_CHECKING:
    from tracehouse.redaction.redactor import Redactor

SESSION_FORMATS = ("markdown", "html", "jsonl", "otel", "sessions-import")
# One file per run, one line per session (a request of many sessions for sessions-import); the
# only formats that can go to standard output.
STREAM_FILES = {"jsonl": "sessions", "otel": "traces", "sessions-import": "requests"}
# A sessions-import request holds at most this many items, or about this much JSON: what one
# transaction of the importing store, or one HTTP request to a gateway, should carry.
REQUEST_ITEMS = 100
REQUEST_BYTES = 8 * 2**20


@dataclass(frozen=True)
class DocumentOptions:
    format: str
    context_only: bool = False  # only what the model saw: no host notices
    since_last: bool = False
    utc: bool = False
    file_mode: int = FILE_MODE
    # Redacts what the ledger still holds verbatim before a session is rendered.
    redactor: Redactor | None = None

    def __post_init__(self) -> None:
        if self.format not in SESSION_FORMATS:
            raise ConfigError(f"--format {self.format!r}: one of {', '.join(SESSION_FORMATS)}")
        if self.context_only and self.format not in ("markdown", "html"):
            raise ConfigError("--context: only for --format markdown or html")


@dataclass(frozen=True)
class DocumentReport:
    format: str
    out: Path
    selected: int  # sessions the filters keep
    written: int  # sessions written this time
    files: list[Path]
    since: str | None  # the previous mark, with --since-last
    tally: ExportTally = field(default_factory=ExportTally)


def export_documents(
    store: SessionStore,
    out: Path,
    options: DocumentOptions,
    filters: SessionFilters,
    stream: IO[bytes] | None = None,
) -> DocumentReport:
    """Write to `out`, or, for the line formats, to `stream` (standard output) when given."""
    if stream is not None:
        if options.format not in STREAM_FILES or options.since_last:
            raise ConfigError(
                f"--out -: only {', '.join(STREAM_FILES)} go to standard output, without"
                " --since-last"
            )
        sessions = select_sessions(store, filters)
        todo = _exportable(options.format, sessions)
        tally = ExportTally()
        details = (_detail(store, r["session_id"], options, tally) for r in todo)
        stream.writelines(_lines(options.format, details))
        return DocumentReport(options.format, out, len(sessions), len(todo), [], None, tally)
    started = now_iso()
    target = str(out.resolve())
    since = last_export(store, target, options.format) if options.since_last else None
    sessions = select_sessions(store, filters)
    todo = _exportable(options.format, _changed_and_above(sessions, since) if since else sessions)
    stems = file_stems(sessions)
    make_out(out, options.file_mode)
    tally = ExportTally()
    files = _write(store, out, options, sessions, todo, stems, started, tally)
    if options.since_last:
        store.save_export_mark(target, options.format, started, len(todo))
    return DocumentReport(options.format, out, len(sessions), len(todo), files, since, tally)


def _exportable(format: str, sessions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The sessions a format can hold: a trace needs a time (`otel.has_time`), so the report's
    count says how many were left out."""
    if format != "otel":
        return sessions
    from tracehouse.exports.otel import has_time

    return [r for r in sessions if has_time(r)]


def _detail(
    store: SessionStore, session_id: str, options: DocumentOptions, tally: ExportTally
) -> dict[str, Any]:
    detail = session_detail(store, session_id)
    if options.redactor is not None:
        redact_detail(options.redactor, detail, tally)
    return detail


def _write(
    store: SessionStore,
    out: Path,
    options: DocumentOptions,
    sessions: list[dict[str, Any]],
    todo: list[dict[str, Any]],
    stems: dict[str, str],
    started: str,
    tally: ExportTally,
) -> list[Path]:
    def when(iso: str | None) -> str:
        return local_time(iso, utc=options.utc) if iso else "?"

    def load(session_id: str) -> dict[str, Any]:
        return _detail(store, session_id, options, tally)

    if options.format in STREAM_FILES:
        path = out / f"{STREAM_FILES[options.format]}.jsonl"
        if options.since_last:
            if not todo:
                return []
            path = _new_file(out, STREAM_FILES[options.format], started)
        _write_lines(path, options.format, (load(r["session_id"]) for r in todo), options.file_mode)
        return [path]
    if options.format == "markdown":
        from tracehouse.exports import markdown

        def link(session_id: str) -> str | None:
            return f"{stems[session_id]}.md" if session_id in stems else None

        def render(detail: dict[str, Any]) -> str:
            return markdown.render(detail, link=link, when=when, context_only=options.context_only)

        ext = ".md"
    else:
        from tracehouse.exports import html

        page = html.Pages(stems, when, load, context_only=options.context_only)
        render, ext = page.session, ".html"
    files = []
    for row in todo:
        path = out / f"{stems[row['session_id']]}{ext}"
        write_whole(path, render(load(row["session_id"])), options.file_mode)
        files.append(path)
    if options.format == "html":
        index = out / "index.html"
        write_whole(index, page.index(sessions), options.file_mode)
        files.append(index)
    return files


def _new_file(out: Path, name: str, started: str) -> Path:
    """An incremental export's own file, named by when it started, so earlier ones stay whole
    (and sort in the order they were written)."""
    stamp = "".join(ch for ch in started if ch.isdigit() or ch == "T")
    path, n = out / f"{name}-{stamp}.jsonl", 1
    while path.exists():
        n += 1
        path = out / f"{name}-{stamp}-{n}.jsonl"
    return path


def _write_lines(
    path: Path, format: str, details: Iterator[dict[str, Any]], mode: int = FILE_MODE
) -> None:
    with whole_file(path, mode) as partial, open(partial, "wb") as f:
        f.writelines(_lines(format, details))


def _lines(format: str, details: Iterator[dict[str, Any]]) -> Iterator[bytes]:
    """One JSON document per line: an import item or an OTLP trace request per session, or a
    `sessions.import` request per batch of sessions."""
    if format == "otel":
        from tracehouse.exports.otel import trace_request

        return (orjson.dumps(trace_request(d)) + b"\n" for d in details)
    from tracehouse.model.item_json import encode_item

    # A link that leaves its session (an older ledger's subagent replay) cannot travel.
    items = (orjson.dumps(encode_item(d, drop_outside=True)) for d in details)
    if format == "jsonl":
        return (item + b"\n" for item in items)
    return (request + b"\n" for request in import_requests(items))


def import_requests(items: Iterable[bytes]) -> Iterator[bytes]:
    """Items (their JSON) as `sessions.import` requests of at most REQUEST_ITEMS items or about
    REQUEST_BYTES. Each request's idempotency key is derived from its items, so exporting an
    unchanged ledger again gives the same keys and a repeated import writes nothing."""
    import xxhash

    held: list[bytes] = []
    size = 0

    def request() -> bytes:
        body = b"[" + b",".join(held) + b"]"
        key = f"export:{xxhash.xxh3_128_hexdigest(body)}"
        head = orjson.dumps({"source": "tracehouse", "mode": "backfill", "idempotencyKey": key})
        return head[:-1] + b',"items":' + body + b"}"

    for item in items:
        if held and (len(held) == REQUEST_ITEMS or size + len(item) > REQUEST_BYTES):
            yield request()
            held, size = [], 0
        held.append(item)
        size += len(item)
    if held:
        yield request()


def _changed_and_above(sessions: list[dict[str, Any]], since: str) -> list[dict[str, Any]]:
    """The sessions changed since `since`, and every session above one of them."""
    parent = {r["session_id"]: r["parent_session_id"] for r in sessions}
    wanted: set[str] = set()
    for r in sessions:
        if (r["last_imported_at"] or "") >= since:
            node: str | None = r["session_id"]
            while node is not None and node not in wanted and node in parent:
                wanted.add(node)
                node = parent[node]
    return [r for r in sessions if r["session_id"] in wanted]


def last_export(store: SessionStore, target: str, format: str) -> str | None:
    """When the last export of `format` to `target` started (None: never)."""
    rows = store.query(
        "SELECT exported_at FROM export_marks WHERE target = ? AND format = ?", [target, format]
    )
    return rows[0]["exported_at"] if rows else None
