"""One hostile trial: a home whose one file (or one Cursor value) is mutated, backfilled into a
fresh ledger, and judged: no traceback, no hang, every reject located, and the sessions read from
every other file exactly as a clean backfill wrote them.

Shared by the mutation test (bounded, run by CI) and `bench/fuzz_bench.py` (thousands, seeded).
"""

from __future__ import annotations

import random
import re
import shutil
import signal
import sqlite3
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.hostile.damage import (
    DATABASE_DAMAGE,
    TEXT_DAMAGE,
    TRIAL_MAX_LINE,
    damage_database,
    damage_text,
)
from tests.hostile.mutations import LINE_MUTATIONS, Mutation, mutate_file, mutate_line
from tracehouse.parsers.registry import PARSERS
from tracehouse.pipeline.options import SyncOptions
from tracehouse.pipeline.sync import sync
from tracehouse.redaction.detect import Detector
from tracehouse.redaction.redactor import Redactor
from tracehouse.store import open_store

# What a trial mutates: every source of the registry (a source added later is fuzzed too), at
# its default places under a home; the files that hold its records, by name.
SOURCES = tuple(PARSERS)
PATTERNS = ("*.jsonl", "*.json", "*.txt", "*.db", "*.vscdb", "*.sqlite", ".aider.chat.history.md")
DATABASES = (".vscdb", ".db", ".sqlite")
CONTENT = ("turns", "messages", "tool_calls", "message_sources")
# Where a reject can point: a line of a JSONL file, a whole file, database or directory, an item
# of a G0 rollout, or a Cursor key (a composer, a bubble, a chat list entry and its bubble).
# Gemini CLI, OpenCode and the Cursor agent name a line or record of a document, a message, a
# session row or a blob of a database, or one file of a unit made of several (alone, or before
# the place in it: a Cursor agent transcript's twins).
LOCATED = re.compile(
    r"^(\S+\.(json|jsonl|txt) )?"
    r"(line \d+( \(byte \d+\))?|file|database|directory|document|(items|messages|history)?\[\d+\]"
    r"|(composerData|bubbleId):\S+( bubble #\d+)?"
    r"|(workbench\.panel\.aichat\.view\.aichat\.chatdata|composer\.composerData"
    r"|composer\.composerHeaders)(\[\d+\])?( bubble #\d+)?"
    r"|(record|message|part|session|meta|blob) \S+( model| message \S+)?|timeline\[\d+\]"
    r"|\S+\.(json|jsonl|txt))$"
)


COARSE = ("file", "database", "directory", "document")
# Hostile input passes the redaction a sync does by default, as everything else a parse made.
REDACTOR = Redactor(b"trial" * 8, Detector())


@dataclass
class Outcome:
    target: str  # the file (and key) mutated
    mutation: str
    crash: str | None = None
    hang: bool = False
    unlocated: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)  # sessions of other files that changed
    rejects: int = 0
    family: str = ""  # which kind of damage: a line's value, a whole file, a database…
    reimported: bool = False  # read over a ledger that already held the clean file
    coarse: int = 0  # rejects placed at a whole file, database or document, not a line or key


class Hang(Exception):
    pass


@contextmanager
def deadline(seconds: int) -> Iterator[None]:
    def fire(_signum: int, _frame: Any) -> None:
        raise Hang

    previous = signal.signal(signal.SIGALRM, fire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def targets(home: Path) -> list[tuple[str, Path]]:
    """(provider, file) for every transcript, document and database of a home."""
    found = []
    for provider in SOURCES:
        paths = {p for root in roots_of(home, provider) for pattern in PATTERNS
                 for p in root.rglob(pattern)}  # fmt: skip
        found += [(provider, p) for p in sorted(paths) if p.is_file() and not p.is_symlink()]
    return found


def roots_of(home: Path, provider: str) -> list[Path]:
    """The source's default places under `home` that exist; for logs kept in projects (Aider,
    Crush), the project folders that hold one."""
    parser = PARSERS[provider]
    if getattr(parser, "PER_PROJECT", False):
        return parser.watch_roots([home])
    return [r for r in parser.default_roots(home, {}) if r.is_dir()]


def copy_source(home: Path, trial_home: Path, provider: str) -> None:
    """The source's places under `home`, copied to the same places under `trial_home`."""
    for root in roots_of(home, provider):
        target = trial_home / root.relative_to(home)
        if not target.exists():
            shutil.copytree(root, target, symlinks=True)


def backfill(
    home: Path, ledger: Path, provider: str, leave_out: tuple[str, ...] = ()
) -> tuple[Any, dict[str, Any]]:
    store = open_store(str(ledger))
    try:
        roots = PARSERS[provider].default_roots(home, {})
        options = SyncOptions(sources={provider: roots}, max_line=TRIAL_MAX_LINE, redactor=REDACTOR)
        report = sync(store, options)
        return report, ledger_by_source(store, home, leave_out)
    finally:
        store.close()


# Files depend on each other in two sanctioned ways, and a mutation may change those columns of
# another file's rows (and so their fingerprints), never the rest: a spawning call finds its
# child by the child's first prompt (`spawned_session_id`), and a prompt history annotates the
# transcripts' own prompts (`meta.history_ts`).
DERIVED = ("spawned_session_id", "spawned_source_session_id", "fingerprint")
ANNOTATING = {"history.jsonl": ("meta",), "logs.json": ("meta",)}
# Any Codex rollout may be a review's parent: the review child's prompt names it (`meta.source`).
ANNOTATING_ANY = {"codex": ("meta",)}


def ledger_by_source(store: Any, home: Path, leave_out: tuple[str, ...] = ()) -> dict[Any, Any]:
    """(source path, source session id) → the session's rows, paths relative to the home, without
    the columns that say when a row was written. Keyed by session as well as file: a Cursor
    database holds many composers, each judged alone."""
    prefix = str(home)

    def relative(value: Any) -> Any:
        return value.replace(prefix, "~") if isinstance(value, str) else value

    paths = {
        s["session_id"]: (relative(s["source_path"]), s["source_session_id"])
        for s in store.rows("sessions")
    }
    out: dict[Any, Any] = {}
    for table in CONTENT:
        for row in store.rows(table):
            kept = {
                k: relative(v)
                for k, v in row.items()
                if (not k.endswith("_at") or k == "created_at") and k not in leave_out
            }
            out.setdefault(paths.get(row["session_id"]), []).append((table, sorted(kept.items())))
    for rows in out.values():
        rows.sort(key=repr)
    return out


def mutate_cursor(db: Path, rng: random.Random) -> str:
    """Mutate one chat value of a Cursor database in place (a copy); returns which."""
    conn = sqlite3.connect(db)
    try:
        tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master")}
        rows = []
        if "ItemTable" in tables:
            rows += conn.execute(
                "SELECT 'ItemTable', key FROM ItemTable"
                " WHERE key LIKE '%composer%' OR key LIKE '%aichat%'"
            ).fetchall()
        if "cursorDiskKV" in tables:
            rows += conn.execute(
                "SELECT 'cursorDiskKV', key FROM cursorDiskKV WHERE key LIKE 'composerData:%'"
                " OR key LIKE 'bubbleId:%'"
            ).fetchall()
        if "cursorDiskKV" in tables and (rng.randrange(4) == 0 or not rows):
            key: Any = rng.choice([7, None, b"\xff\xfe", "composerData:", "bubbleId:x"])
            conn.execute("INSERT INTO cursorDiskKV (key, value) VALUES (?, ?)", (key, "{}"))
            conn.commit()
            return f"extra row with key {key!r}"
        if not rows:
            return "nothing to mutate"
        table, key = rng.choice(rows)
        (value,) = conn.execute(f"SELECT value FROM {table} WHERE key = ?", (key,)).fetchone()
        raw = value if isinstance(value, bytes) else str(value or "").encode("utf-8", "replace")
        m = Mutation(rng.choice(LINE_MUTATIONS[:4]), rng.randrange(1 << 16), rng.randrange(64))
        new = mutate_line(raw, m)
        # Cursor stores TEXT; invalid UTF-8 arrives as text bytes no decoder accepts.
        as_text = rng.random() < 0.5
        conn.execute(
            f"UPDATE {table} SET value = {'CAST(? AS TEXT)' if as_text else '?'} WHERE key = ?",
            (new, key),
        )
        conn.commit()
        return f"{key} {m.describe()}"
    finally:
        conn.close()


def mutate_database(db: Path, rng: random.Random) -> tuple[str, bytes]:
    """Mutate one text or blob value of one row of any table; returns which, and the row as it
    was (the sessions it names are the ones the mutation may touch)."""
    conn = sqlite3.connect(db)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # rows only in the -wal are mutable too
        tables = [
            name
            for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            if not name.startswith("sqlite_")
        ]
        cells = []
        for table in tables:
            columns = [r[1] for r in conn.execute(f'PRAGMA table_info("{table}")')]
            try:
                rows = conn.execute(f'SELECT rowid, * FROM "{table}"').fetchall()
            except sqlite3.OperationalError:  # WITHOUT ROWID, a virtual table's module missing
                continue
            for rowid, *values in rows:
                cells += [
                    (table, rowid, column, value, values)
                    for column, value in zip(columns, values, strict=True)
                    if isinstance(value, str | bytes)
                ]
        if not cells:
            return "nothing to mutate", b""
        table, rowid, column, value, row = rng.choice(cells)
        raw = value if isinstance(value, bytes) else value.encode("utf-8", "surrogatepass")
        m = Mutation(rng.choice(LINE_MUTATIONS[:4]), rng.randrange(1 << 16), rng.randrange(64))
        new: Any = mutate_line(raw, m)
        if isinstance(value, str):
            new = new.decode("utf-8", "replace") if rng.random() < 0.5 else new
        conn.execute(f'UPDATE "{table}" SET "{column}" = ? WHERE rowid = ?', (new, rowid))
        conn.commit()
        was = b" ".join(v if isinstance(v, bytes) else str(v).encode() for v in row)
        return f"{table} row {rowid} {column}: {m.describe()}", was
    finally:
        conn.close()


def run_trial(
    home: Path,
    work: Path,
    provider: str,
    target: Path,
    rng: random.Random,
    baseline: Any,
    *,
    reimport: bool | None = None,
) -> Outcome:
    """Damage `target` (a file under `home`) in a copy of the home, backfill, judge. With
    `reimport` (drawn when None) the copy is backfilled clean first, so the damaged file is read
    again over a ledger that already holds it."""
    trial_home = work / "home"
    shutil.rmtree(work, ignore_errors=True)
    copy_source(home, trial_home, provider)
    copy = trial_home / target.relative_to(home)
    reimported = reimport if reimport is not None else rng.random() < 0.25
    if reimported:
        backfill(trial_home, work / "ledger.db", provider)
    # What names the sessions the mutation may touch, beyond its own file's: a session spread
    # over files (OpenCode's messages and parts, a Cursor agent's twins and subagents) or rows.
    scope = str(copy.relative_to(trial_home)).encode()
    whole_file = False  # the damage may change every session the file holds
    if copy.suffix in DATABASES and rng.random() < 0.4:
        for suffix in ("-wal", "-shm"):
            if provider == "cursor":  # as mutate_cursor does: the damage is to the main file
                Path(str(copy) + suffix).unlink(missing_ok=True)
        family = f"database {rng.choice(DATABASE_DAMAGE)}"
        what = damage_database(copy, family.split()[1], rng)
        whole_file = True
    elif provider == "cursor" and copy.suffix == ".vscdb":
        for suffix in ("-wal", "-shm"):
            Path(str(copy) + suffix).unlink(missing_ok=True)
        family = "cursor value"
        what = mutate_cursor(copy, rng)
        if Path(str(target) + "-wal").exists():
            what += " (WAL dropped)"
    elif copy.suffix in DATABASES:
        family = "database value"
        what, row = mutate_database(copy, rng)
        scope += b" " + row
    elif rng.random() < 0.4:
        kinds = [k for k in TEXT_DAMAGE if k != "document-value" or copy.suffix == ".json"]
        scope += b" " + copy.read_bytes()
        family = f"text {rng.choice(kinds)}"
        what = damage_text(copy, family.split()[1], rng)
        whole_file = True
    else:
        m = Mutation(rng.choice(LINE_MUTATIONS), rng.randrange(1 << 16), rng.randrange(64))
        original = copy.read_bytes()
        data, line = mutate_file(original, rng.randrange(1 << 16), m)
        copy.write_bytes(data)
        what = f"line {line}: {m.describe()}"
        scope += b" " + original
        family = f"line {m.kind}"
    outcome = Outcome(str(target.relative_to(home)), what, family=family, reimported=reimported)
    leave_out = DERIVED + ANNOTATING.get(target.name, ()) + ANNOTATING_ANY.get(provider, ())
    baseline = {
        p: sorted(((t, [kv for kv in row if kv[0] not in leave_out]) for t, row in rows), key=repr)
        for p, rows in baseline.items()
    }
    try:
        with deadline(60):
            report, ledger = backfill(trial_home, work / "ledger.db", provider, leave_out)
    except Hang:
        outcome.hang = True
        return outcome
    except Exception:
        outcome.crash = traceback.format_exc(limit=-3)
        return outcome
    outcome.rejects = len(report.rejects)
    outcome.unlocated = [r.location for r in report.rejects if not LOCATED.match(r.location)]
    outcome.coarse = sum(r.location in COARSE for r in report.rejects)
    mutated = "~" + str(copy)[len(str(trial_home)) :]
    composer = _composer_of(what) if provider == "cursor" else None
    # Rows of an OpenCode database belong to the sessions they name; any other file or database
    # holds its own sessions whole.
    whole = whole_file or provider != "opencode" or copy.suffix not in DATABASES
    for (path, sid), rows in baseline.items():
        named = bool(sid) and str(sid).encode() in scope
        touched = (path == mutated and whole and (composer is None or composer == sid)) or named
        if not touched and ledger.get((path, sid)) != rows and "(WAL dropped)" not in what:
            outcome.lost.append(f"{path} {sid}")
    return outcome


def _composer_of(what: str) -> str | None:
    """The composer a mutated Cursor key belongs to; None when the value holds several."""
    key = what.split(" ", 1)[0]
    if key.startswith(("composerData:", "bubbleId:")):
        return key.split(":")[1]
    return "" if what.startswith("extra row") else None


def baseline_of(home: Path, work: Path, provider: str) -> dict[Any, Any]:
    shutil.rmtree(work, ignore_errors=True)
    trial_home = work / "home"
    copy_source(home, trial_home, provider)
    _report, ledger = backfill(trial_home, work / "ledger.db", provider)
    return ledger
