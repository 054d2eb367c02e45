"""The SQLite ledger's record of applied migrations: the one sqlite-utils' `Migrations` kept.

`tests/data/ledgers/before-token-convention.sql` was dumped from a ledger whose migrations
sqlite-utils applied; a ledger made now must be one it could have made, and a failed step must
leave a ledger at the version it had.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tracehouse.store.sqlite import migrations
from tracehouse.store.sqlite.migrations import applied, known_migrations, upgrade
from tracehouse.store.sqlite.store import SqliteStore

BEFORE = Path(__file__).parent.parent / "data" / "ledgers" / "before-token-convention.sql"


def _record_schema(conn: sqlite3.Connection) -> list[str]:
    return [
        row[0]
        for row in conn.execute(
            "SELECT sql FROM sqlite_schema WHERE tbl_name = '_sqlite_migrations' ORDER BY type DESC"
        )
    ]


def _old(tmp_path: Path) -> sqlite3.Connection:
    """The dumped ledger, opened afresh (its search index is declared through `sqlite_schema`,
    which a connection reads again only when it opens)."""
    path = tmp_path / "old.db"
    with sqlite3.connect(path) as conn:
        conn.executescript(BEFORE.read_text(encoding="utf-8"))
    conn.close()
    return sqlite3.connect(path, isolation_level=None)


def test_a_new_ledger_records_its_migrations_as_sqlite_utils_did(tmp_path: Path) -> None:
    old = _old(tmp_path)
    SqliteStore(tmp_path / "new.db").close()
    new = sqlite3.connect(tmp_path / "new.db")
    assert _record_schema(new) == _record_schema(old)
    assert len(_record_schema(new)) == 2  # the table and its unique index
    rows = new.execute("SELECT migration_set, name, applied_at FROM _sqlite_migrations").fetchall()
    assert [name for _, name, _ in rows] == known_migrations()
    assert {kind for kind, _, _ in rows} == {"tracehouse"}
    # sqlite-utils' form of the time: `str` of an aware datetime, as the dump's rows hold.
    assert all(at.endswith("+00:00") and at[10] == " " for _, _, at in rows)


def test_a_ledger_sqlite_utils_migrated_takes_the_rest(tmp_path: Path) -> None:
    conn = _old(tmp_path)
    before = applied(conn)
    assert 0 < len(before) < len(known_migrations())
    assert upgrade(conn, tmp_path / "old.db") == len(known_migrations())
    assert applied(conn) == known_migrations()
    ids = [row[0] for row in conn.execute("SELECT id FROM _sqlite_migrations ORDER BY rowid")]
    assert ids == list(range(1, len(ids) + 1))


def test_a_step_that_fails_leaves_the_ledger_at_its_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    conn = _old(tmp_path)
    before = applied(conn)
    schema = conn.execute("SELECT name, sql FROM sqlite_schema ORDER BY name").fetchall()

    def broken(_: sqlite3.Connection) -> None:
        raise sqlite3.OperationalError("disk I/O error")

    last = migrations.STEPS[-1][0]
    monkeypatch.setattr(migrations, "STEPS", [*migrations.STEPS[:-1], (last, broken)])
    with pytest.raises(sqlite3.OperationalError):
        upgrade(conn, tmp_path / "old.db")
    assert not conn.in_transaction
    assert applied(conn) == before
    assert conn.execute("SELECT name, sql FROM sqlite_schema ORDER BY name").fetchall() == schema
    monkeypatch.undo()
    assert upgrade(conn, tmp_path / "old.db") == len(known_migrations())
