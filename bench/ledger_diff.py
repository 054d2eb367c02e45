"""The ledger a change must not move: backfill every home with two versions of tracehouse and
diff the two SQLite ledgers row by row, run provenance aside (issue #65's rule for a port).

    uv run python bench/ledger_diff.py --before /tmp/before/src [--source gemini-cli] [--home H]

`--before` is another checkout's `src/` (`git worktree add /tmp/before <rev>`); the other side
is this checkout. `--new-state PROVIDER`: that source's resume state (a watermark's `state`) is
left out of the comparison, for a port that keeps another one (it raises its `STATE_SHAPE`: a
cursor of the old shape is read whole again once, to the same rows).

The homes are every fixture home (`$TRACEHOUSE_CORPUS/homes/*`) and every
test home (`tests/data/*/*`), or those given with `--home`. Each is backfilled by each side
into a ledger of its own (`--source` narrows it to one source), and every table of the ledger
is compared as a multiset of rows, without the columns that say when or by which run a row was
written. Prints each home with a difference,
the table, and up to `--show` rows on each side; exits 1 when anything differs.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

# Written by the search index, the embeddings or the usage rollup beside the rows (each a sum
# or an index of tables compared here), or bookkeeping of the run.
SKIPPED_TABLES = ("_sqlite_migrations", "import_runs", "embedding", "embedded", "search_",
                  "export_marks", "api_tokens", "import_requests", "usage_slots")  # fmt: skip
# When and by which run a row was written: a run's provenance, not what it read.
PROVENANCE = {"run_id", "first_imported_at", "last_imported_at", "source_read_at",
              "recorded_at", "importer_version", "applied_at"}  # fmt: skip
# A watermark's cursor keeps when the run read the unit (Cursor's `reconciled_at`): the time of
# the run, not of the source.
RUN_TIMES_IN_CURSORS = ("reconciled_at",)
PROVENANCE_BY_TABLE = {
    "watermarks": {"updated_at"},
    "rejects": {"created_at"},
    "session_aliases": {"created_at"},
    "session_history": {"history_id"},
}


def homes(corpus: Path | None) -> list[Path]:
    """The fixture homes, and each test home: a folder of a folder of `tests/data`."""
    found = sorted(p for p in (corpus / "homes").iterdir() if p.is_dir()) if corpus else []
    return found + sorted(p for p in (ROOT / "tests" / "data").glob("*/*") if p.is_dir())


def backfill(src: Path | None, home: Path, store: Path, source: str | None) -> None:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("TRACEHOUSE_") and k != "PYTHONDONTWRITEBYTECODE"}  # fmt: skip
    state = tempfile.mkdtemp()
    env |= {"XDG_STATE_HOME": state, "XDG_CONFIG_HOME": state,
            "TRACEHOUSE_EMBEDDINGS": "none", "TRACEHOUSE_PROGRESS": "false"}  # fmt: skip
    if src is not None:
        env["PYTHONPATH"] = str(src)
    command = [sys.executable, "-m", "tracehouse.cli.app", "sync", "backfill", "--home",
               str(home), "--store", str(store), "-q"]  # fmt: skip
    if source:
        command += ["--source", source]
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode not in (0, 3):  # 3: some files rejected, which the ledger holds too
        raise SystemExit(f"{home}: backfill failed ({done.returncode}): {done.stderr[-2000:]}")


def rows(store: Path, new_state: tuple[str, ...] = ()) -> dict[str, Counter[tuple[object, ...]]]:
    conn = sqlite3.connect(store)
    tables = [name for (name,) in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE '%VIRTUAL%'"
        " AND name NOT LIKE '%\\_fts\\_%' ESCAPE '\\' ORDER BY name")]  # fmt: skip
    out = {}
    for table in tables:
        if table.startswith(SKIPPED_TABLES):
            continue
        columns = [r[1] for r in conn.execute(f'PRAGMA table_info("{table}")')]
        skip = PROVENANCE | PROVENANCE_BY_TABLE.get(table, set())
        kept = [c for c in columns if c not in skip]
        listed = ", ".join(f'"{c}"' for c in kept)
        found = conn.execute(f'SELECT {listed} FROM "{table}"')
        if table == "watermarks":
            at, state = kept.index("cursor"), kept.index("state")
            source = kept.index("source_provider")
            found = (tuple(_without_run_times(v) if i == at else
                           None if i == state and r[source] in new_state else v
                           for i, v in enumerate(r)) for r in found)  # fmt: skip
        out[table] = Counter(found)
    conn.close()
    return out


def _without_run_times(cursor: str | None) -> str | None:
    try:
        found = json.loads(cursor) if cursor else None
    except ValueError:
        return cursor
    if not isinstance(found, dict):
        return cursor
    return json.dumps({k: v for k, v in found.items() if k not in RUN_TIMES_IN_CURSORS})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="another checkout's src/")
    parser.add_argument("--source", help="only this source (a provider name)")
    parser.add_argument("--home", type=Path, action="append", help="only these homes")
    parser.add_argument("--show", type=int, default=3, help="rows shown per difference")
    parser.add_argument(
        "--new-state",
        action="append",
        default=[],
        metavar="PROVIDER",
        help="leave this source's resume state out (a port that keeps another)",
    )
    corpus = os.environ.get("TRACEHOUSE_CORPUS", str(ROOT.parent / "shared" / "fixtures"))
    parser.add_argument("--fixtures", type=Path, default=Path(corpus))
    args = parser.parse_args()
    if not (args.before / "tracehouse").is_dir():
        raise SystemExit(f"--before {args.before}: no tracehouse package there")
    fixtures = args.fixtures if args.fixtures.is_dir() else None
    chosen = args.home or homes(fixtures)
    differing = 0
    total: Counter[str] = Counter()
    with tempfile.TemporaryDirectory() as scratch:
        for n, home in enumerate(chosen):
            before, after = Path(scratch) / f"{n}-before.db", Path(scratch) / f"{n}-after.db"
            backfill(args.before.resolve(), home, before, args.source)
            backfill(None, home, after, args.source)
            old, new = rows(before, tuple(args.new_state)), rows(after, tuple(args.new_state))
            total.update({t: sum(c.values()) for t, c in new.items()})
            for table in sorted(old.keys() | new.keys()):
                gone = old.get(table, Counter()) - new.get(table, Counter())
                came = new.get(table, Counter()) - old.get(table, Counter())
                if gone or came:
                    differing += 1
                    print(f"{home}: {table}: {sum(gone.values())} rows only before,"
                          f" {sum(came.values())} only after")  # fmt: skip
                    for side, found in (("-", gone), ("+", came)):
                        for row in list(found)[: args.show]:
                            print(f"  {side} {row!r}"[:600])
    counted = ", ".join(f"{t} {n:,}" for t, n in sorted(total.items()) if n)
    print(f"{len(chosen)} homes, {differing} differences; rows compared: {counted}")
    sys.exit(1 if differing else 0)


if __name__ == "__main__":
    main()
