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

from tests.hostile.mutations import LINE_MUTATIONS, Mutation, mutate_file, mutate_line
from tracehouse.parsers.registry import PARSERS
from tracehouse.pipeline.sync import SyncOptions, sync
from tracehouse.sinks import open_store

SOURCES = {"claude-code": ".claude", "codex": ".codex", "cursor": ".config/Cursor"}
CONTENT = ("turns", "messages", "tool_calls", "message_sources")
# Where a reject can point: a line of a JSONL file, a whole file, database or directory, an item
# of a G0 rollout, or a Cursor key (a composer, a bubble, a chat list entry).
LOCATED = re.compile(
    r"^(line \d+ \(byte \d+\)|file|database|directory|items\[\d+\]"
    r"|(composerData|bubbleId):\S+( bubble #\d+)?"
    r"|(workbench\.panel\.aichat\.view\.aichat\.chatdata|composer\.composerData"
    r"|composer\.composerHeaders)(\[\d+\])?)$"
)


@dataclass
class Outcome:
    target: str  # the file (and key) mutated
    mutation: str
    crash: str | None = None
    hang: bool = False
    unlocated: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)  # sessions of other files that changed
    rejects: int = 0


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
    """(provider, file) for every JSONL transcript and Cursor database of a home."""
    found = []
    for provider, sub in SOURCES.items():
        root = home / sub
        pattern = "**/*.vscdb" if provider == "cursor" else "**/*.jsonl"
        found += [(provider, p) for p in sorted(root.glob(pattern)) if p.is_file()]
    return found


def backfill(
    home: Path, ledger: Path, provider: str, leave_out: tuple[str, ...] = ()
) -> tuple[Any, dict[str, Any]]:
    store = open_store(str(ledger))
    try:
        roots = PARSERS[provider].default_roots(home, {})
        report = sync(store, SyncOptions(sources={provider: roots}))
        return report, ledger_by_source(store, home, leave_out)
    finally:
        store.close()


# Files depend on each other in two sanctioned ways, and a mutation may change those columns of
# another file's rows (and so their fingerprints), never the rest: a spawning call finds its
# child by the child's first prompt (`spawned_session_id`), and a prompt history annotates the
# transcripts' own prompts (`meta.history_ts`).
DERIVED = ("spawned_session_id", "spawned_source_session_id", "fingerprint")
ANNOTATING = {"history.jsonl": ("meta",)}


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


def run_trial(
    home: Path, work: Path, provider: str, target: Path, rng: random.Random, baseline: Any
) -> Outcome:
    """Mutate `target` (a file under `home`) in a copy of the home, backfill, judge."""
    trial_home = work / "home"
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(home / SOURCES[provider], trial_home / SOURCES[provider], symlinks=True)
    copy = trial_home / target.relative_to(home)
    if provider == "cursor":
        for suffix in ("-wal", "-shm"):
            Path(str(copy) + suffix).unlink(missing_ok=True)
        what = mutate_cursor(copy, rng)
        if Path(str(target) + "-wal").exists():
            what += " (WAL dropped)"
    else:
        m = Mutation(rng.choice(LINE_MUTATIONS), rng.randrange(1 << 16), rng.randrange(64))
        data, line = mutate_file(copy.read_bytes(), rng.randrange(1 << 16), m)
        copy.write_bytes(data)
        what = f"line {line}: {m.describe()}"
    outcome = Outcome(str(target.relative_to(home)), what)
    leave_out = DERIVED + ANNOTATING.get(target.name, ())
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
    mutated = "~" + str(copy)[len(str(trial_home)) :]
    composer = _composer_of(what) if provider == "cursor" else None
    for (path, sid), rows in baseline.items():
        touched = path == mutated and (composer is None or composer == sid)
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
    shutil.copytree(home / SOURCES[provider], trial_home / SOURCES[provider], symlinks=True)
    _report, ledger = backfill(trial_home, work / "ledger.db", provider)
    return ledger
