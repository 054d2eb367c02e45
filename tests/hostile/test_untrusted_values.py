"""Values of a type nobody expected, in every source: a `null` document, a number where a composer
was, a REAL where a blob was. Each shape crashed a sync once (issue #40); each is now a reject at
its file and key, and everything else of the home is imported."""

from __future__ import annotations

import os
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.hostile.test_hostile_input import _cursor_user, _messages_by_composer
from tests.hostile.trial import LOCATED, backfill
from tests.sources.cursor_dbs import inline_workspace
from tests.sources.test_cursor_agent import STORE_MESSAGES, make_store
from tracehouse.parsers.kit import untrusted

DATA = Path(__file__).resolve().parent.parent / "data"


def _home(tmp_path: Path, source: str) -> Path:
    home = tmp_path / "home"
    shutil.copytree(DATA / source / "home", home, symlinks=True)
    return home


def _sessions(ledger: dict[Any, Any]) -> set[str]:
    return {sid for (_path, sid) in ledger}


def test_a_null_gemini_prompt_log_is_a_reject_and_every_chat_imports(tmp_path: Path) -> None:
    home = _home(tmp_path, "gemini")
    _report, clean = backfill(home, tmp_path / "clean.db", "gemini-cli")
    logs = home / ".gemini" / "tmp" / "weather-app" / "logs.json"
    logs.write_text("null")
    report, ledger = backfill(home, tmp_path / "ledger.db", "gemini-cli")
    assert [(r.unit_key, r.location) for r in report.rejects] == [(str(logs), "document")]
    assert "a JSON null, not an array" in report.rejects[0].reason
    recovered = {sid for sid in _sessions(clean) if str(sid).endswith("@logs")}
    assert _sessions(ledger) == _sessions(clean) - recovered


@pytest.mark.parametrize("document", ["null", "5", '"text"', "[]", '{"items": 3}'])
def test_a_legacy_codex_rollout_of_another_type_is_a_reject(tmp_path: Path, document: str) -> None:
    home = _home(tmp_path, "codex")
    _report, clean = backfill(home, tmp_path / "clean.db", "codex")
    legacy = next((home / ".codex" / "sessions").glob("rollout-*.json"))
    legacy.write_text(document)
    report, ledger = backfill(home, tmp_path / "ledger.db", "codex")
    assert [(r.unit_key, r.location) for r in report.rejects] == [(str(legacy), "document")]
    assert len(_sessions(ledger)) == len(_sessions(clean)) - 1


@pytest.mark.parametrize(
    "value",
    [5, 2.5, "null", '"text"', '{"subComposerIds": 5}', '{"subagentComposerIds": [1, null]}'],
    ids=["int", "real", "json-null", "json-string", "children-int", "children-junk"],
)
def test_a_cursor_composer_of_another_type_leaves_the_others_whole(
    tmp_path: Path, value: Any
) -> None:
    home, path = _cursor_user(tmp_path)
    conn = sqlite3.connect(path)  # as stored: an INTEGER, a REAL, or TEXT
    conn.execute("INSERT INTO cursorDiskKV (key, value) VALUES ('composerData:zz', ?)", (value,))
    conn.commit()
    conn.close()
    report, ledger = backfill(home, tmp_path / "ledger.db", "cursor")
    assert _messages_by_composer(ledger) == {"c0": 2, "c1": 2, "c2": 2}
    assert all(r.location == "composerData:zz" for r in report.rejects)
    assert all(LOCATED.match(r.location) for r in report.rejects)


@pytest.mark.parametrize(
    "value", ["text", None, 1.5, 2**62, -1], ids=["text", "null", "real", "huge-int", "int"]
)
def test_a_cursor_agent_blob_of_another_type_is_a_reject_for_that_blob(
    tmp_path: Path, value: Any
) -> None:
    cursor_dir = tmp_path / "home" / ".cursor"
    store = make_store(cursor_dir, STORE_MESSAGES)
    untouched = make_store(cursor_dir / "second", STORE_MESSAGES)
    conn = sqlite3.connect(store)
    (blob_id,) = conn.execute("SELECT id FROM blobs ORDER BY rowid LIMIT 1").fetchone()
    conn.execute("UPDATE blobs SET data = ? WHERE id = ?", (value, blob_id))
    conn.commit()
    conn.close()
    report, ledger = backfill(tmp_path / "home", tmp_path / "ledger.db", "cursor-agent")
    assert [(r.unit_key, r.location) for r in report.rejects] == [(str(store), f"blob {blob_id}")]
    assert "where a BLOB is expected" in report.rejects[0].reason
    assert untouched.exists() and ledger  # the store still imports its other messages


def test_the_readers_name_every_type_and_never_raise() -> None:
    assert untrusted.decode_json(b'{"a": 1}') == ({"a": 1}, None)
    assert untrusted.decode_json("[1]", list) == ([1], None)
    for raw, why in [
        (None, "NULL where JSON text is expected"),
        (7, "an INTEGER where JSON text is expected"),
        (b"null", "a JSON null, not an object"),
        (b"[1]", "a JSON array, not an object"),
        ("{", "invalid JSON"),
    ]:
        value, problem = untrusted.decode_json(raw)
        assert value is None and problem is not None and problem.startswith(why), problem
    assert untrusted.blob(memoryview(b"ab")) == (b"ab", None)
    assert untrusted.blob(2**62) == (None, "an INTEGER where a BLOB is expected")
    assert untrusted.digest_bytes(5) != untrusted.digest_bytes("5")
    assert untrusted.strings(["a", 1, None, "b"]) == ["a", "b"]
    assert untrusted.strings(5) == untrusted.items("x") == [] and untrusted.mapping([1]) == {}


def _truncated(db: Path) -> None:
    db.write_bytes(db.read_bytes()[: db.stat().st_size // 2])


def _other_shape(db: Path) -> None:
    conn = sqlite3.connect(db)
    tables = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    for (name,) in tables:
        conn.execute(f'DROP TABLE "{name}"')
        conn.execute(f'CREATE TABLE "{name}" (zz, yy)')
    conn.commit()
    conn.close()


def _no_tables(db: Path) -> None:
    db.unlink()
    sqlite3.connect(db).close()
    db.write_bytes(b"")


BREAKS = {
    "truncated": (_truncated, "malformed"),
    "zero-length": (lambda db: db.write_bytes(b""), "holds no"),
    "garbage": (lambda db: db.write_bytes(b"\x00not sqlite\xff" * 500), "not a database"),
    "header-only": (lambda db: db.write_bytes(db.read_bytes()[:100]), "malformed"),
    "other-shape": (_other_shape, "no such column"),
    "no-tables": (_no_tables, "holds no"),
    "directory": (lambda db: (db.unlink(), db.mkdir()), "Is a directory"),
    "dangling-link": (lambda db: (db.unlink(), db.symlink_to(db.parent / "gone")), "link to"),
}


def _cursor_global(tmp_path: Path) -> tuple[Path, Path, str]:
    home, path = _cursor_user(tmp_path)
    conn = sqlite3.connect(path)  # the database's composers become one session for the test
    conn.execute("DELETE FROM cursorDiskKV WHERE key GLOB '*:c[12]*'")
    conn.commit()
    conn.close()
    inline_workspace(home / ".config" / "Cursor" / "User")  # a second database, untouched
    return home, path, "cursor"


def _cursor_agent_store(tmp_path: Path) -> tuple[Path, Path, str]:
    store = make_store(tmp_path / "home" / ".cursor", STORE_MESSAGES)
    other = store.parent.parent / "ffffffff-6666-4666-8666-000000000006" / "store.db"
    other.parent.mkdir()
    shutil.copy(store, other)  # a second agent, untouched: it must still import
    conn = sqlite3.connect(other)
    (meta,) = conn.execute("SELECT value FROM meta WHERE key = '0'").fetchone()
    meta = bytes.fromhex(meta).replace(store.parent.name.encode(), other.parent.name.encode())
    conn.execute("UPDATE meta SET value = ? WHERE key = '0'", (meta.hex(),))
    conn.commit()
    conn.close()
    return tmp_path / "home", store, "cursor-agent"


@pytest.mark.parametrize("make", [_cursor_global, _cursor_agent_store], ids=["cursor", "agent"])
@pytest.mark.parametrize("name", list(BREAKS))
def test_a_broken_database_is_one_reject_naming_it(tmp_path: Path, make: Any, name: str) -> None:
    home, db, provider = make(tmp_path)
    _report, clean = backfill(home, tmp_path / "clean.db", provider)
    brk, why = BREAKS[name]
    brk(db)
    report, ledger = backfill(home, tmp_path / "ledger.db", provider)
    assert [(r.unit_key, r.location) for r in report.rejects] in (
        [(str(db), "database")],
        [(str(db), "file")],
    )
    assert why in report.rejects[0].reason, report.rejects[0].reason
    assert len(clean) == 2 and len(ledger) == 1  # the broken database's session is not imported
    for key, rows in ledger.items():  # what the other databases hold is as a clean run wrote it
        assert clean[key] == rows


def test_garbage_beside_a_database_changes_nothing(tmp_path: Path) -> None:
    home, db = _cursor_user(tmp_path)
    _report, clean = backfill(home, tmp_path / "clean.db", "cursor")
    Path(f"{db}-wal").write_bytes(b"\x37\x7f\x06\x82" + b"\xff" * 40_000)
    report, ledger = backfill(home, tmp_path / "ledger.db", "cursor")
    assert report.rejects == [] and ledger == clean


def test_a_dangling_link_named_like_a_transcript_is_a_reject(tmp_path: Path) -> None:
    home = _home(tmp_path, "gemini")
    logs = home / ".gemini" / "tmp" / "weather-app" / "logs.json"
    logs.unlink()
    logs.symlink_to(logs.parent / "nowhere.json")
    report, _ledger = backfill(home, tmp_path / "ledger.db", "gemini-cli")
    assert [(r.unit_key, r.location) for r in report.rejects] == [(str(logs), "file")]
    assert "which does not exist" in report.rejects[0].reason


def test_a_document_cut_short_is_placed_at_its_line(tmp_path: Path) -> None:
    home = _home(tmp_path, "gemini")
    chat = home / ".gemini" / "tmp" / "weather-app" / "chats"
    chat = chat / "session-2026-03-10T09-15-aaaa1111.json"
    text = chat.read_bytes()
    chat.write_bytes(text[: len(text) // 2])
    os.utime(chat, (1, 1))  # quiet long since: not a rewrite in progress
    report, _ledger = backfill(home, tmp_path / "ledger.db", "gemini-cli")
    [reject] = report.rejects
    line = text[: len(text) // 2].count(b"\n") + 1
    assert (reject.unit_key, reject.location) == (str(chat), f"line {line}")
    assert LOCATED.match(reject.location)


def test_a_junk_row_whose_key_holds_spaces_is_one_place(tmp_path: Path) -> None:
    """A row of junk in the Cursor agent's `meta`, keyed by text with spaces (the fuzz bench's
    trial that failed): its reject names the key as one word, JSON-escaped, and the store's
    conversation still imports."""
    store = make_store(tmp_path / "home" / ".cursor", STORE_MESSAGES)
    key = '{"type": "user", "message": {"role": "user", "content": 7}}'
    conn = sqlite3.connect(store)
    conn.execute("INSERT INTO meta VALUES (?, ?)", (key, "not hex"))
    conn.commit()
    conn.close()
    report, ledger = backfill(tmp_path / "home", tmp_path / "ledger.db", "cursor-agent")
    [reject] = report.rejects
    assert reject.location == "meta " + untrusted.token(key) and LOCATED.match(reject.location)
    assert (
        untrusted.token(key) == r'"{\"type\":\u0020\"user\",\u0020\"message\":'
        r'\u0020{\"role\":\u0020\"user\",\u0020\"content\":\u00207}}"'
    )
    assert untrusted.token("ses_01abc") == "ses_01abc" and untrusted.token(42) == "42"
    assert len(_sessions(ledger)) == 1


def test_a_parser_that_still_raises_is_a_reject_for_its_unit_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A shape no parser foresaw, and a bug in reading it: the unit is a reject that says so
    and keeps its cursor (the next run reads it again); the other units import."""
    from tracehouse.parsers import gemini_cli

    home = _home(tmp_path, "gemini")
    _report, clean = backfill(home, tmp_path / "clean.db", "gemini-cli")
    real = gemini_cli.parse

    def parse(unit: Any, cursor: Any, options: Any) -> Any:
        if unit.key.endswith("logs.json"):
            raise RuntimeError("a bug")
        return real(unit, cursor, options)

    monkeypatch.setattr(gemini_cli, "parse", parse)
    report, ledger = backfill(home, tmp_path / "ledger.db", "gemini-cli")
    [reject] = report.rejects
    assert reject.unit_key.endswith("logs.json") and reject.location == "file"
    assert "RuntimeError: a bug" in reject.reason
    recovered = {sid for sid in _sessions(clean) if str(sid).endswith("@logs")}
    assert _sessions(ledger) == _sessions(clean) - recovered
