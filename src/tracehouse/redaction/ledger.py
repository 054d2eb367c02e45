"""`tracehouse secrets scan|redact`: a ledger stored before redaction, or with `redact = false`.

`scan` lists what would be redacted, each with where it is and a masked preview. `redact`
rewrites it in place through the import contract, as `store copy` writes (mode `migration`, so
provenance is kept): a batch of sessions is one transaction, changed rows get their new
fingerprints and search-index entries from the store's own writer, a session that holds nothing
is not written at all. An interrupted run has committed whole batches; running it again finds
only what is left. Cursors' resume states and rejects' excerpts are rewritten after the rows.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from tracehouse.model.contract import new_run_id
from tracehouse.model.rows import json_text
from tracehouse.model.tables import SESSIONS
from tracehouse.redaction.redactor import Markers, Redactor
from tracehouse.redaction.rows import FREE_TEXT, TABLES, redact_batch
from tracehouse.store.items import MIGRATION
from tracehouse.store.protocol import RunTotals, SessionStore, Tx
from tracehouse.upkeep.copy import copy_batch

BATCH_SESSIONS = 50
_ID = {name: table.primary_key[0] for name, table in TABLES.items()}
# Bookkeeping that holds text read from the agents' files: (table, key columns, text column).
BOOKS = (
    ("watermarks", ("source_provider", "unit_key"), "state"),
    ("rejects", ("reject_id",), "raw_excerpt"),
)


@dataclass(frozen=True)
class Found:
    kind: str
    session: str | None  # the session's label (None: bookkeeping)
    table: str
    row: str  # the row's id (or key)
    column: str
    preview: str  # the secret masked: its shape, never enough of it to use

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "session": self.session, "table": self.table,
                "row": self.row, "column": self.column, "preview": self.preview}  # fmt: skip


def masked(secret: str) -> str:
    """A secret's shape: the first characters of a long one (an issuer's prefix), its length."""
    shown = secret[:4] if len(secret) >= 16 else secret[:1]
    return f"{shown}… ({len(secret)} chars)"


def scan(store: SessionStore, redactor: Redactor) -> Iterator[Found]:
    """Every secret the ledger holds that redaction would replace, session by session."""
    for sessions in _session_batches(store):
        labels = {s["session_id"]: s["label"] for s in sessions}
        yield from _found_in(redactor, SESSIONS.name, sessions, labels)
        for name, tuples in copy_batch(store, sessions, "").rows.items():
            names = TABLES[name].names
            as_dicts = [dict(zip(names, row, strict=True)) for row in tuples]
            yield from _found_in(redactor, name, as_dicts, labels)
    for book, keys, column in BOOKS:
        rows = store.query(f"SELECT {', '.join(keys)}, {column} FROM {book}")
        values = [_text(row[column]) for row in rows]
        for index, kind, text in redactor.find(values):
            key = "/".join(str(rows[index][k]) for k in keys)
            yield Found(kind, None, book, key, column, masked(text))


def _found_in(
    redactor: Redactor, name: str, rows: list[dict[str, Any]], labels: dict[str, str]
) -> Iterator[Found]:
    places, values = [], []
    for row in rows:
        for column in FREE_TEXT[name]:
            if row.get(column):
                places.append((row, column))
                values.append(_text(row[column]))
    for index, kind, text in redactor.find(values):
        row, column = places[index]
        label = labels.get(row["session_id"])
        yield Found(kind, label, name, str(row[_ID[name]]), column, masked(text))


@dataclass
class RedactReport:
    run_id: str
    sessions: int = 0  # in the ledger
    rewritten: int = 0  # sessions whose rows changed
    rows_written: int = 0
    bookkeeping: int = 0  # cursors' states and rejects' excerpts rewritten
    redacted: Counter[str] = field(default_factory=Counter)
    failed: list[str] = field(default_factory=list)
    compacted: bool = False


def redact(
    store: SessionStore,
    redactor: Redactor,
    progress: Callable[[int, int], None] | None = None,
    *,
    compact: bool = True,
) -> RedactReport:
    """Rewrite every secret the ledger holds as its marker (see the module's docstring)."""
    report = RedactReport(new_run_id())
    store.start_run(report.run_id, MIGRATION)
    total = int(store.query("SELECT count(*) AS n FROM sessions")[0]["n"])
    report.sessions = total
    # Two passes: the first learns every secret the ledger holds, so that the second replaces
    # one wherever it is, in sessions and cursors where no rule would find it on its own (a
    # token the agent repeats in prose, read from a `.env` in another session).
    known: Markers = {}
    for sessions in _session_batches(store):
        redact_batch(redactor, copy_batch(store, sessions, report.run_id), known)
    done = 0
    for sessions in _session_batches(store):
        batch = redact_batch(redactor, copy_batch(store, sessions, report.run_id), known)
        if batch.redactions:
            response = store.import_batch(batch)  # the run's redactions come with the batch
            report.rewritten += response.count("upserted") + response.count("imported")
            report.rows_written += response.rows_written
            report.failed.extend(
                f"{r.source_session_id}: {r.reason}"
                for r in response.results
                if r.status == "failed"
            )
            report.redacted.update(batch.redactions)
        done += len(sessions)
        if progress:
            progress(done, total)
    books: Counter[str] = Counter()
    for table, keys, column in BOOKS:
        report.bookkeeping += _redact_book(store, redactor, table, keys, column, books, known)
    report.redacted.update(books)
    error = f"{len(report.failed)} sessions not rewritten" if report.failed else None
    store.finish_run(report.run_id, RunTotals(error=error, redactions=dict(books)))
    if compact and (report.rewritten or report.bookkeeping):
        store.compact()  # the old text is gone from the rows, not yet from the files
        report.compacted = True
    return report


def _redact_book(
    store: SessionStore,
    redactor: Redactor,
    table: str,
    keys: tuple[str, ...],
    column: str,
    tally: Counter[str],
    known: Markers,
) -> int:
    rows = store.query(f"SELECT {', '.join(keys)}, {column} FROM {table}")
    values = [_text(row[column]) for row in rows]
    found: Counter[str] = Counter()
    new = redactor.texts(values, [column == "state"] * len(values), found, known)
    changed = [
        (new[i], *(row[k] for k in keys)) for i, row in enumerate(rows) if new[i] is not values[i]
    ]
    if not changed:
        return 0
    where = " AND ".join(f"{k} = ?" for k in keys)
    # A cursor's state is JSON: PostgreSQL takes text for it only cast.
    value = "CAST(? AS json)" if column == "state" and store.backend == "postgresql" else "?"

    def rewrite(tx: Tx) -> int:
        for values in changed:
            tx.execute(f"UPDATE {table} SET {column} = {value} WHERE {where}", values)
        return len(changed)

    count = store.write(rewrite)
    tally.update(found)
    return count


def _session_batches(store: SessionStore) -> Iterator[list[dict[str, Any]]]:
    """The sessions, by id, a batch at a time (read as they are reached, not held whole)."""
    after = ""
    columns = ", ".join(SESSIONS.names)
    while True:
        batch = store.query(
            f"SELECT {columns} FROM sessions WHERE session_id > ? ORDER BY session_id LIMIT ?",
            (after, BATCH_SESSIONS),
        )
        if not batch:
            return
        yield batch
        after = batch[-1]["session_id"]


def _text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", "surrogatepass")
    return json_text(value)
