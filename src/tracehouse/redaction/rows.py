"""Redacting the ledger's rows: which columns hold free text, and fingerprints over the result.

Every text a source produces passes here before it is fingerprinted and stored: a parse's rows,
sessions, resume states and rejects (`redact_result`, in the ingest loop), a pushed or imported
request (`redact_batch`, at the gateway and in `tracehouse import`), the rows of a ledger written
before redaction (`secrets redact`, through `redact_batch`), an export (`redact_chunk`,
`redact_detail`). Identifiers, times, enums and paths are not free text and are left alone: a
path is not a secret, and changing an id would change what a row is.

All the texts of one parse are scanned together, so a secret found in one place (an assignment in
a `.env` the agent read) is replaced wherever else the parse holds it (the agent's prose).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

import orjson

from tracehouse.model.columns import Kind, Table
from tracehouse.model.fingerprint import combine
from tracehouse.model.rows import json_text, row_fingerprint
from tracehouse.model.tables import MESSAGE_SOURCES, MESSAGES, SESSIONS, TOOL_CALLS, TURNS
from tracehouse.redaction.detect import MARKER, SEPARATOR
from tracehouse.redaction.redactor import Markers, Redactor

if TYPE_CHECKING:
    from tracehouse.model.contract import ImportBatch, ImportItem, WatermarkUpdate
    from tracehouse.parsers.base import UnitResult

# The free-text columns of each table that holds what an agent or a person wrote.
FREE_TEXT: dict[str, tuple[str, ...]] = {
    SESSIONS.name: ("title", "git_branch", "git_remote", "task_description", "metadata"),
    TURNS.name: ("metadata",),
    MESSAGES.name: ("content", "thinking", "meta", "metadata", "context"),
    TOOL_CALLS.name: ("params", "result", "error", "metadata"),
    MESSAGE_SOURCES.name: ("title", "uri", "content_preview", "metadata"),
}
TABLES = {t.name: t for t in (SESSIONS, TURNS, MESSAGES, TOOL_CALLS, MESSAGE_SOURCES)}


# A table's free-text columns: (position, name, JSON or not), by the table's name (hashing a
# table's declaration on every call cost a fifth of redaction's own time).
_COLUMNS = {
    name: tuple(
        (table.names.index(n), n, table.column(n).kind is Kind.JSON) for n in FREE_TEXT[name]
    )
    for name, table in TABLES.items()
}


def _columns(table: Table) -> tuple[tuple[int, str, bool], ...]:
    return _COLUMNS.get(table.name, ())


class Texts:
    """Texts gathered from many places for one scan; each place puts its results back."""

    def __init__(self) -> None:
        self.values: list[str | None] = []
        self.json: list[bool] = []
        self._steps: list[Callable[[Sequence[str | None]], None]] = []
        self.found: Counter[str] = Counter()  # kind → secrets replaced
        self.known: Markers | None = None  # see `Redactor.texts`

    def add(self, value: Any, is_json: bool) -> int:
        if is_json and value is not None and not isinstance(value, str):
            value = json_text(value)
        self.values.append(value if isinstance(value, str) else None)
        self.json.append(is_json)
        return len(self.values) - 1

    def extend(self, column: Sequence[Any], is_json: bool) -> int:
        """A whole column at once (a parse's rows: text already); returns where it starts."""
        start = len(self.values)
        if not _TEXT_TYPES.issuperset(map(type, column)):
            column = [self._text(v, is_json) for v in column]
        self.values.extend(column)
        self.json.extend([is_json] * len(column))
        return start

    @staticmethod
    def _text(value: Any, is_json: bool) -> str | None:
        if value is None or isinstance(value, str):
            return value
        return json_text(value) if is_json else None

    def then(self, step: Callable[[Sequence[str | None]], None]) -> None:
        """Run `step` with the redacted values once they are known (only if any changed)."""
        self._steps.append(step)

    def changed(self, new: Sequence[str | None], index: int) -> bool:
        return new[index] is not self.values[index]

    def run(self, redactor: Redactor) -> None:
        # The steps are closures over this object: dropped once run, they do not keep a whole
        # parse's rows alive in a reference cycle until the garbage collector finds it (the
        # parsers' memory held up to a batch of such garbage).
        steps, self._steps = self._steps, []
        if not self.values:
            return
        new = redactor.texts(self.values, self.json, self.found, self.known)
        if new is self.values:
            return  # nothing found: nearly always
        for step in steps:
            step(new)


_TEXT_TYPES = {str, type(None)}


def _tuples(texts: Texts, rows: dict[str, list[tuple[Any, ...]]]) -> None:
    """Rows in column order (a parse's), taken a column at a time: changed rows are
    fingerprinted again, as the parser would have fingerprinted them."""
    for name, table_rows in rows.items():
        table = TABLES.get(name)
        if table is None or not table_rows:
            continue
        transposed = list(zip(*table_rows, strict=True))
        blocks = [(i, texts.extend(transposed[i], is_json)) for i, _, is_json in _columns(table)]
        texts.then(_put_tuples(texts, table, table_rows, blocks))


def _put_tuples(
    texts: Texts, table: Table, rows: list[tuple[Any, ...]], blocks: list[tuple[int, int]]
) -> Callable[[Sequence[str | None]], None]:
    def put_back(new: Sequence[str | None]) -> None:
        changed: dict[int, list[int]] = {}  # row → its columns that changed
        for i, start in blocks:
            for r in range(len(rows)):
                if texts.changed(new, start + r):
                    changed.setdefault(r, []).append(i)
        starts = dict(blocks)
        for r, columns in changed.items():
            values = list(rows[r])
            for i in columns:
                start = starts[i]
                value = new[start + r]
                was = rows[r][i]
                # a JSON value read back parsed (PostgreSQL) stays parsed
                parsed = texts.json[start + r] and was is not None and not isinstance(was, str)
                values[i] = orjson.loads(value or "null") if parsed else value
            if "fingerprint" in table.names:  # JSON as canonical text, however a row holds it
                values[table.names.index("fingerprint")] = row_fingerprint(
                    table, dict(zip(table.names, values, strict=True))
                )
            rows[r] = tuple(values)

    return put_back


def _dicts(texts: Texts, table: Table, rows: Sequence[dict[str, Any]], changed: list[int]) -> None:
    """Rows as dicts, changed in place; a JSON column keeps its type (text stays text, an object
    stays an object). Appends to `changed` the positions of the rows that changed."""
    columns = _columns(table)
    slots = []
    for r, row in enumerate(rows):
        picks = [(n, texts.add(row.get(n), j), j) for _, n, j in columns if row.get(n)]
        if picks:
            slots.append((r, picks))

    def put_back(new: Sequence[str | None]) -> None:
        for r, picks in slots:
            row, touched = rows[r], False
            for name, k, is_json in picks:
                if not texts.changed(new, k):
                    continue
                touched = True
                keep_text = not is_json or isinstance(row[name], str)
                row[name] = new[k] if keep_text else orjson.loads(new[k] or "null")
            if touched:
                changed.append(r)

    texts.then(put_back)


def _item(texts: Texts, item: ImportItem, put: Callable[[ImportItem], None]) -> None:
    """A parsed session: its row, fingerprinted over the redacted row and the parser's salt as
    `parsers/base.session_item` computes it, and its cursors' resume states."""
    session = dict(item.session)
    changed: list[int] = []
    _dicts(texts, SESSIONS, [session], changed)
    states: list[WatermarkUpdate] = list(item.watermarks)
    for w, update in enumerate(item.watermarks):
        _state(texts, update, partial(states.__setitem__, w))

    def put_back(_new: Sequence[str | None]) -> None:
        out = item
        if changed:
            fingerprint = combine([row_fingerprint(SESSIONS, session), *item.salt])
            session["fingerprint"] = fingerprint
            out = dataclasses.replace(out, session=session, fingerprint=fingerprint)
        if states != list(item.watermarks):
            out = dataclasses.replace(out, watermarks=tuple(states))
        put(out)

    texts.then(put_back)


def _state(texts: Texts, update: WatermarkUpdate, put: Callable[[WatermarkUpdate], None]) -> None:
    """A cursor's resume state holds text the parser carries to its next chunk (an unfinished
    message): it is stored too, so it is redacted too, and the next chunk resumes from that."""
    state = update.state
    if not state:
        return
    text = state.decode("utf-8", "surrogatepass") if isinstance(state, bytes) else json_text(state)
    k = texts.add(text, True)

    def put_back(new: Sequence[str | None]) -> None:
        value = new[k]
        if texts.changed(new, k) and value is not None:
            put(dataclasses.replace(update, state=value.encode("utf-8", "surrogatepass")))

    texts.then(put_back)


def redact_result(redactor: Redactor, result: UnitResult) -> UnitResult:
    """A parse's rows, sessions, resume states and rejects with every secret replaced."""
    texts = Texts()
    _tuples(texts, result.rows)
    if result.item is not None:
        _item(texts, result.item, lambda item: setattr(result, "item", item))
    extra = list(result.extra)
    for e, item in enumerate(result.extra):
        _item(texts, item, partial(extra.__setitem__, e))
    if result.watermark is not None:
        _state(texts, result.watermark, lambda new: setattr(result, "watermark", new))
    rejects = [(r, texts.add(reject.raw_excerpt, False)) for r, reject in enumerate(result.rejects)]

    def put_rejects(new: Sequence[str | None]) -> None:
        for r, k in rejects:
            if texts.changed(new, k):
                result.rejects[r] = dataclasses.replace(result.rejects[r], raw_excerpt=new[k])

    texts.then(put_rejects)
    texts.run(redactor)
    result.extra = extra
    result.redacted = texts.found
    return result


def redact_batch(
    redactor: Redactor, batch: ImportBatch, known: Markers | None = None
) -> ImportBatch:
    """A received batch (a push, an import) redacted on arrival, in one scan. An item whose
    session or rows changed is fingerprinted again over what is stored, as the codec
    fingerprints an item that names no fingerprint; the others keep the one they came with."""
    texts = Texts()
    texts.known = known
    rows = {name: list(table_rows) for name, table_rows in batch.rows.items()}
    _tuples(texts, rows)
    sessions = [dict(item.session) for item in batch.items]
    for session in sessions:
        _dicts(texts, SESSIONS, [session], [])
    texts.run(redactor)
    if not texts.found:
        return batch
    touched = {
        row[1]
        for name, table_rows in rows.items()
        for row, before in zip(table_rows, batch.rows[name], strict=True)
        if row is not before
    }
    items = []
    for item, session in zip(batch.items, sessions, strict=True):
        if session == item.session and item.session_id not in touched:
            items.append(item)
            continue
        fingerprint = combine(
            [row_fingerprint(SESSIONS, session)]
            + [row[_FINGERPRINT[name]] for name, table_rows in rows.items()
               for row in table_rows if row[1] == item.session_id]
        )  # fmt: skip
        session["fingerprint"] = fingerprint
        items.append(dataclasses.replace(item, session=session, fingerprint=fingerprint))
    return dataclasses.replace(batch, items=tuple(items), rows=rows, redactions=dict(texts.found))


_FINGERPRINT = {name: t.names.index("fingerprint") for name, t in TABLES.items()}


def redact_chunk(
    redactor: Redactor, table: Table, chunk: list[tuple[Any, ...]], tally: ExportTally
) -> list[tuple[Any, ...]]:
    """Rows as a store hands them to an export (text as str or UTF-8 bytes), redacted of what
    the ledger still holds verbatim (a ledger synced with `redact = false`, or before
    redaction existed). One scan of the chunk's free text decides: nearly always there is
    nothing, and the chunk goes on as it came."""
    columns = _columns(table)
    if not columns:
        return chunk
    parts = [
        value if isinstance(value, bytes) else value.encode("utf-8", "surrogatepass")
        for row in chunk
        for i, _, _ in columns
        if isinstance(value := row[i], str | bytes) and value
    ]
    blob = SEPARATOR.join(parts)
    for match in MARKER.finditer(blob):
        tally.markers[match.group(1).decode()] += 1
    if not redactor.detector.scan(blob):
        return chunk
    rows = [
        tuple(v.decode("utf-8", "surrogatepass") if isinstance(v, bytes) else v for v in row)
        for row in chunk
    ]
    texts = Texts()
    _tuples(texts, {table.name: rows})
    texts.run(redactor)
    tally.redacted.update(texts.found)
    return rows


@dataclasses.dataclass
class ExportTally:
    """What an export's manifest says of secrets: the markers it carries (placed when the
    ledger was written), by kind, and what the export itself replaced."""

    markers: Counter[str] = dataclasses.field(default_factory=Counter)
    redacted: Counter[str] = dataclasses.field(default_factory=Counter)


def redact_detail(redactor: Redactor, detail: dict[str, Any], tally: ExportTally) -> None:
    """A session as `store/reads.session_detail` reads it, redacted in place before an export
    renders it (a ledger may hold what was stored verbatim); its markers are counted."""
    texts = Texts()
    groups = (
        (SESSIONS, [detail["session"], *detail.get("children", [])]),
        (TURNS, detail.get("turns", [])),
        (MESSAGES, detail.get("messages", [])),
        (TOOL_CALLS, detail.get("tool_calls", [])),
        (MESSAGE_SOURCES, detail.get("sources", [])),
    )
    for table, rows in groups:
        _dicts(texts, table, rows, [])
    texts.run(redactor)
    tally.redacted.update(texts.found)
    for table, rows in groups:
        for row in rows:
            for _, name, _ in _columns(table):
                value = row.get(name)
                if isinstance(value, str) and "[REDACTED:" in value:
                    for match in MARKER.finditer(value.encode("utf-8", "surrogatepass")):
                        tally.markers[match.group(1).decode()] += 1
