"""A first load's two large search indexes, built beside the writer in processes of their own.

With many cores, SQLite's one writer is a backfill's wall: the parsers wait to hand it batches,
and a third to a half of its work is the search index, which FTS5 builds at the same cost per
byte of text whatever its settings. A file has one writer, so the index can leave the writer's
path only by being built somewhere else.

During a first load (a ledger with no session yet: the backfill of a whole home), messages_fts
and tool_calls_fts are each built by a process of its own, into a contentless FTS5 table of the
same columns, tokenizer and tuning in a scratch database, fed by the writer:

- at each flush the writer reads the new rows' indexed values back (in its own transaction, in
  C) and queues them to the builder;
- a row it rewrites or deletes is queued as a 'delete' command with the values it was indexed
  with (`sqlite_index.open_built`);
- a builder commits when the ledger commits and rolls back when it rolls back.

When the run ends, each finished index is copied whole into the ledger's own empty index, with
its mark (`adopt`): the shadow tables of a contentless index and of an external-content one of
the same configuration hold the same thing, every term at every row, column and offset.

The builders are let go at anything out of the ordinary: another connection writing the ledger
meanwhile, a builder that failed or could not start, a ledger index no longer empty. The ledger's
own index was left empty at mark 0, so the writer's next flush indexes everything itself.
"""

from __future__ import annotations

import multiprocessing
import os
import queue as queue_module
import shutil
import signal
import sqlite3
import tempfile
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tracehouse.processes import exit_with_parent, start_method
from tracehouse.search import scripts
from tracehouse.search.sqlite_index import (
    BUILT,
    BUILT_PENDING,
    BUILT_RETIRED,
    BY_NAME,
    MARKS,
    PENDING,
    TOKENIZE,
    Index,
    indexed_through,
    open_built,
    retired_columns,
    tuning,
)
from tracehouse.sqlite_binding import bind_directly
from tracehouse.state import scratch

# The indexes worth a process: on the bench corpus messages_fts and tool_calls_fts took 1.1 and
# 1.2 s of the index's 2.7 s each, sessions_fts (titles) a few ms.
BUILT_INDEXES = ("messages_fts", "tool_calls_fts")
CHUNK_ROWS = 2000  # rows a message to a builder holds: about 2.5 MB of the corpus's text
QUEUED = 8  # messages a builder may be behind before the writer waits for it
BUILDER_CACHE_KIB = 8 * 1024
WAIT_SECONDS = 0.5  # between looks at a builder that does not answer, while it lives
SHADOWS = ("data", "idx", "docsize")  # what an FTS5 index is made of, beside its config


@dataclass(frozen=True)
class Built:
    """A finished index: its database, its mark, and its builder's seconds."""

    path: str
    mark: int
    seconds: float


def buildable(conn: sqlite3.Connection, index: Index) -> bool:
    """Whether `index` can be built elsewhere and adopted whole: it holds and queues nothing,
    and its table has no row yet."""
    rows = conn.execute(f"SELECT 1 FROM {index.table} LIMIT 1").fetchone()
    return rows is None and _empty(conn, index)


def _empty(conn: sqlite3.Connection, index: Index) -> bool:
    """The ledger's own `index` holds nothing (mark 0, no segment) and queues nothing."""
    return (
        indexed_through(conn, index) == 0
        and not conn.execute(f"SELECT 1 FROM main.{index.name}_idx LIMIT 1").fetchone()
        and not conn.execute(f"SELECT 1 FROM {PENDING} WHERE name = ? LIMIT 1", (index.name,))
        .fetchone()
    )  # fmt: skip


class IndexBuilders:
    """The writer's side of the builders: started at a first load's first group, fed at each
    flush, told of each commit and rollback, finished when the run ends. Let go at the first
    sign of trouble, after which every call does nothing."""

    def __init__(self, conn: sqlite3.Connection, ledger: Path) -> None:
        self.directory = tempfile.mkdtemp(
            prefix=f"{scratch.PREFIX}{os.getpid()}-", dir=ledger.parent
        )
        self.marks = dict.fromkeys(BUILT_INDEXES, 0)  # as of the ledger's last commit
        self._closing: dict[str, int] = {}
        # Bumped by any other connection's commit: the ledger changed behind the builders.
        (self._version,) = conn.execute("PRAGMA data_version").fetchone()
        context: Any = multiprocessing.get_context(start_method())
        self._replies: Any = context.Queue()
        self._built: dict[str, float] = {}  # a finished builder's seconds
        self._failed: dict[str, str] = {}  # why a builder stopped
        self._gone = False
        self._inboxes: dict[str, Any] = {}
        self._processes: dict[str, Any] = {}
        for name in BUILT_INDEXES:
            self._inboxes[name] = context.Queue(maxsize=QUEUED)
            self._processes[name] = context.Process(
                target=_build,
                args=(
                    os.path.join(self.directory, f"{name}.db"),
                    name,
                    self._inboxes[name],
                    self._replies,
                ),
                name=f"tracehouse-index-{name}",
                daemon=True,
            )

    @classmethod
    def start(cls, conn: sqlite3.Connection, ledger: Path) -> IndexBuilders | None:
        """Builders for a ledger whose two large indexes can be adopted whole; None if not, or
        if they could not be started."""
        if not all(buildable(conn, BY_NAME[name]) for name in BUILT_INDEXES):
            return None
        try:
            builders = cls(conn, ledger)
        except OSError:  # no room for the scratch directory
            return None
        try:
            for process in builders._processes.values():
                process.start()
        except Exception:  # no process to be had, however it failed: the writer indexes itself
            builders.let_go()
            return None
        return builders

    def begin(self, conn: sqlite3.Connection) -> None:
        """At the start of an import transaction. Another connection that wrote the ledger since
        (its writes never reached the builders), or a builder that failed, and they are let go."""
        if self._gone:
            return
        (version,) = conn.execute("PRAGMA data_version").fetchone()
        if version != self._version or not self._alive():
            self.let_go()
            return
        open_built(conn, self.marks)

    def forward(self, conn: sqlite3.Connection) -> None:
        """At each flush: hand each builder what it is owed."""
        if self._gone:
            return
        sent = True
        for name, kind, rows in take_built(conn):  # taken whole, sent or not: it moves the marks
            sent = sent and self._send(name, (kind, rows))
        if not sent:
            self.let_go()

    def before_commit(self, conn: sqlite3.Connection) -> None:
        if not self._gone:
            self._closing = dict(conn.execute(f"SELECT name, indexed_through FROM {BUILT}"))

    def committed(self) -> None:
        if not self._gone:
            self.marks.update(self._closing)
            self._tell_all("commit")

    def rolled_back(self) -> None:
        if not self._gone:
            self._tell_all("rollback")

    def finish_into(self, ledger: Path, busy_timeout_ms: int) -> float | None:
        """The run's end: wait until each builder has committed what the ledger committed, then
        copy their indexes into the ledger's (`adopt`). The seconds the builders spent, or None
        where nothing was adopted; either way they are gone after."""
        try:
            built = None if self._gone else self._finish()
            if built is None or not adopt(ledger, built, busy_timeout_ms):
                return None
            return sum(b.seconds for b in built.values())
        finally:
            self.let_go()

    def let_go(self) -> None:
        """Stop the builders (done or not) and remove their databases; from then on every call
        is a no-op, and the ledger's own index, left empty at mark 0, is the writer's again."""
        if self._gone:
            return
        self._gone = True
        for process in self._processes.values():
            if process.pid is not None:  # started
                process.terminate()
                process.join(timeout=5)
        for inbox in self._inboxes.values():
            inbox.cancel_join_thread()  # what a stopped builder never read is dropped
            inbox.close()
        self._replies.close()
        shutil.rmtree(self.directory, ignore_errors=True)

    def _finish(self) -> dict[str, Built] | None:
        if not self._tell_all("finish"):
            return None
        while len(self._built) < len(BUILT_INDEXES):
            if not self._alive(wait=True):
                return None
        for process in self._processes.values():
            process.join(timeout=5)
        return {
            name: Built(os.path.join(self.directory, f"{name}.db"), self.marks[name], seconds)
            for name, seconds in self._built.items()
        }

    def _tell_all(self, kind: str) -> bool:
        """Send each builder `kind`; a builder that cannot be told lets them all go."""
        if all(self._send(name, (kind, None)) for name in BUILT_INDEXES):
            return True
        self.let_go()
        return False

    def _send(self, name: str, message: tuple[str, Any]) -> bool:
        """Queue `message` to a builder, waiting while it is QUEUED behind; False if it failed
        or stopped."""
        while True:
            try:
                self._inboxes[name].put(message, timeout=WAIT_SECONDS)
                return True
            except queue_module.Full:
                if not self._alive():
                    return False

    def _alive(self, *, wait: bool = False) -> bool:
        """Whether no builder has failed or stopped before it finished, after taking the answers
        that came (waiting up to WAIT_SECONDS for one, with `wait`)."""
        try:
            kind, name, detail = self._replies.get(
                timeout=WAIT_SECONDS if wait else None, block=wait
            )
            while True:
                if kind == "built":
                    self._built[name] = float(detail)
                else:
                    self._failed[name] = str(detail)
                kind, name, detail = self._replies.get_nowait()
        except queue_module.Empty:
            pass
        running = all(
            name in self._built or process.is_alive() for name, process in self._processes.items()
        )
        return running and not self._failed


def take_built(conn: sqlite3.Connection) -> Iterator[tuple[str, str, list[tuple[Any, ...]]]]:
    """What each index built beside the writer is owed since the last take, in the order its
    builder must apply it, as (index, "delete" or "add", rows): the 'delete's, each row with
    the values it was indexed with; the rows queued to be indexed again; then the new rows
    above its mark, CHUNK_ROWS at a time, text as its UTF-8 bytes. Its mark moves on to the
    table's top."""
    for name, mark in conn.execute(f"SELECT name, indexed_through FROM {BUILT}").fetchall():
        index = BY_NAME[name]
        deletes = conn.execute(
            f"SELECT rid, {retired_columns(index)} FROM {BUILT_RETIRED} WHERE name = ?"
            " ORDER BY seq",
            (name,),
        ).fetchall()
        if deletes:
            yield name, "delete", deletes
        values = ", ".join(
            f"CAST({index.value(c, 't', segment=False)} AS BLOB)" for c in index.columns
        )
        again = conn.execute(
            f"SELECT t.rowid, {values} FROM {BUILT_PENDING} p JOIN {index.table} t"
            " ON t.rowid = p.rid WHERE p.name = ?",
            (name,),
        ).fetchall()
        if again:
            yield name, "add", again
        top = mark
        rows = conn.execute(
            f"SELECT t.rowid, {values} FROM {index.table} t WHERE t.rowid > ? ORDER BY t.rowid",
            (mark,),
        )
        while chunk := rows.fetchmany(CHUNK_ROWS):
            top = chunk[-1][0]
            yield name, "add", chunk
        conn.execute(f"DELETE FROM {BUILT_RETIRED} WHERE name = ?", (name,))
        conn.execute(f"DELETE FROM {BUILT_PENDING} WHERE name = ?", (name,))
        conn.execute(f"UPDATE {BUILT} SET indexed_through = ? WHERE name = ?", (top, name))


def adopt(ledger: Path, built: Mapping[str, Built], busy_timeout_ms: int) -> bool:
    """Copy each finished index whole into the ledger's own, with its mark, in one transaction
    of a connection of its own: FTS5 keeps an index's structure in memory per connection, and
    the writer's connection would write its stale, empty one back over the copy (another
    connection's commit makes it read the new one). Only into indexes still `buildable` and of
    the same configuration; False, and nothing changed, where not."""
    conn = sqlite3.connect(ledger, isolation_level=None)
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        for n, index in enumerate(built.values()):
            conn.execute("ATTACH ? AS ?", (index.path, f"built{n}"))
        conn.execute("BEGIN IMMEDIATE")
        for n, (name, index) in enumerate(built.items()):
            if not _copy(conn, BY_NAME[name], f"built{n}", index.mark):
                conn.execute("ROLLBACK")
                return False
        conn.execute("COMMIT")
        return True
    except sqlite3.Error:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        return False
    finally:
        conn.close()


def _copy(conn: sqlite3.Connection, index: Index, schema: str, mark: int) -> bool:
    name = index.name
    config = [
        conn.execute(f"SELECT k, v FROM {s}.{name}_config ORDER BY k").fetchall()
        for s in ("main", schema)
    ]
    if config[0] != config[1] or not _empty(conn, index):
        return False
    for shadow in SHADOWS:
        conn.execute(f"DELETE FROM main.{name}_{shadow}")
        conn.execute(f"INSERT INTO main.{name}_{shadow} SELECT * FROM {schema}.{name}_{shadow}")
    conn.execute(f"UPDATE {MARKS} SET indexed_through = ? WHERE name = ?", (mark, index.name))
    return True


def _build(path: str, name: str, inbox: Any, replies: Any) -> None:
    """A builder: index what the writer hands over into a contentless FTS5 table at `path`,
    committing and rolling back as the ledger does, until told to finish."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the writer decides what a Ctrl-C stops
    exit_with_parent()
    index = BY_NAME[name]
    marks = ", ".join("?" * len(index.columns))
    add = f"INSERT INTO {name} (rowid, {index.column_list}) VALUES (?, {marks})"
    delete = (
        f"INSERT INTO {name} ({name}, rowid, {index.column_list}) VALUES ('delete', ?, {marks})"
    )
    busy = 0.0
    try:
        bind_directly()  # a spawned builder's registry is its own
        conn = sqlite3.connect(path, isolation_level=None)
        # A scratch file, thrown away if the run dies: no syncs. It keeps a rollback journal,
        # as a builder rolls back what the ledger rolls back.
        conn.execute("PRAGMA journal_mode = TRUNCATE")
        conn.execute("PRAGMA synchronous = OFF")
        conn.execute(f"PRAGMA cache_size = -{BUILDER_CACHE_KIB}")
        conn.execute(
            f"CREATE VIRTUAL TABLE {name} USING fts5({index.column_list}, content='',"
            f" tokenize='{TOKENIZE}')"
        )
        for sql in tuning(index):
            conn.execute(sql)
        conn.execute("BEGIN")
        while True:
            kind, rows = inbox.get()
            began = time.perf_counter()
            if kind == "add":
                conn.executemany(add, _indexed(rows))
            elif kind == "delete":
                conn.executemany(delete, _indexed(rows))
            elif kind == "commit":
                conn.execute("COMMIT")
                conn.execute("BEGIN")
            elif kind == "rollback":
                conn.execute("ROLLBACK")
                conn.execute("BEGIN")
            else:  # finish
                conn.execute("COMMIT")
                conn.close()
                replies.put(("built", name, busy + time.perf_counter() - began))
                return
            busy += time.perf_counter() - began
    except (sqlite3.Error, OSError) as exc:  # a full disk, most likely: the writer lets it go
        replies.put(("failed", name, f"{type(exc).__name__}: {exc}"))


def _indexed(rows: Iterable[tuple[Any, ...]]) -> Iterator[tuple[Any, ...]]:
    """Rows as the ledger's own index takes them (`th_segmented` on each value)."""
    for rid, *values in rows:
        yield rid, *(_text(v) for v in values)


def _text(value: Any) -> Any:
    if isinstance(value, bytes):
        value = value.decode(errors="replace")
    return scripts.segmented(value) if isinstance(value, str) else value
