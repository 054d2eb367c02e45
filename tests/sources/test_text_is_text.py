"""Text is text in every source (issue #64: Crush's `—` lost a whole database): each source's
test home, with CJK, emoji, bidirectional overrides, combining marks and line separators put
into every piece of prose in its logs (JSON strings holding JSON too), gives the same sessions
and rows as the home without them, the text stored as written, and the same fingerprints on
every run; a PostgreSQL ledger holds them as SQLite does. The homes of text logs (JSON, JSONL,
Markdown) are all here; Crush and Cursor keep SQLite databases (Crush's non-ASCII rows have a
test of their own)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from tests.conftest import DATA
from tracehouse.cli.app import app
from tracehouse.store import open_store

pytestmark = pytest.mark.slow
HOMES = sorted(p.parent.name for p in DATA.glob("*/home"))
TABLES = ("sessions", "turns", "messages", "tool_calls")
PIECES = ["聊天记录", "日本語のテキスト", "😀👩‍💻", "\u202eevil\u202c", "e\u0301\u0327",
          "\u2028", "\u2029", "ｆｕｌｌ，ｗｉｄｔｈ。", "مرحبا", "\u200d\u200b"]  # fmt: skip


def _spiced(value: Any, mark: str) -> Any:
    """Every prose string (one with a space) with `mark` at its end; a string holding JSON has
    its own strings spiced and is written again."""
    if isinstance(value, dict):
        return {k: _spiced(v, mark) for k, v in value.items()}
    if isinstance(value, list):
        return [_spiced(v, mark) for v in value]
    if isinstance(value, str) and value[:1] in "{[":
        try:
            return json.dumps(_spiced(json.loads(value), mark), ensure_ascii=False)
        except ValueError:
            pass
    if isinstance(value, str) and " " in value and not value.startswith(("/", "http")):
        return value + mark
    return value


def _spice_home(home: Path, mark: str, escaped: bool = False) -> None:
    """`escaped`: the JSON written with `\\uXXXX` escapes, as some writers do, which is how a
    lone surrogate reaches a file."""
    for path in sorted(home.rglob("*")):
        if path.suffix == ".json":
            data = json.loads(path.read_text(encoding="utf-8"))
            path.write_text(json.dumps(_spiced(data, mark), ensure_ascii=escaped),
                            encoding="utf-8")  # fmt: skip
        elif path.suffix == ".jsonl":
            lines = path.read_text(encoding="utf-8").split("\n")
            path.write_text("\n".join(
                json.dumps(_spiced(json.loads(line), mark), ensure_ascii=escaped) if line.strip()
                else line for line in lines), encoding="utf-8")  # fmt: skip
        elif path.name.endswith(".md") and not escaped:  # Aider's history: prose a line at a time
            lines = path.read_text(encoding="utf-8").split("\n")
            path.write_text("\n".join(line + mark if line.startswith("#### ") else line
                                      for line in lines), encoding="utf-8")  # fmt: skip


def _ledger(home: Path, store: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Each table's rows as (id, fingerprint): what a run wrote, not when or from where."""
    done = CliRunner().invoke(app, ["sync", "backfill", "--home", str(home), "--store",
                                    str(store), "-q"])  # fmt: skip
    assert done.exit_code == 0, done.output
    with sqlite3.connect(store) as conn:
        return {t: conn.execute(f"SELECT {t[:-1]}_id, fingerprint FROM {t} ORDER BY 1").fetchall()
                for t in TABLES}  # fmt: skip


def _texts(store: Path) -> list[str]:
    with sqlite3.connect(store) as conn:
        found = conn.execute("SELECT content FROM messages UNION ALL SELECT title FROM sessions")
        return [text for (text,) in found if text]


@pytest.mark.parametrize("source", HOMES)
@settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    mark=st.lists(st.sampled_from(PIECES), min_size=1, max_size=4).map(lambda p: " " + "".join(p))
)
def test_text_in_any_script_reads_as_plain_text_does(
    source: str, mark: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    work = tmp_path_factory.mktemp(source)
    plain, spiced = work / "plain", work / "spiced"
    shutil.copytree(DATA / source / "home", plain)
    shutil.copytree(plain, spiced)
    _spice_home(spiced, mark)
    before = _ledger(plain, work / "plain.db")
    after = _ledger(spiced, work / "spiced.db")
    assert {t: len(r) for t, r in after.items()} == {t: len(r) for t, r in before.items()}
    assert any(mark.strip() in text for text in _texts(work / "spiced.db")), "stored as written"
    assert _ledger(spiced, work / "again.db") == after  # another run, another ledger: the same


JSON_HOMES = [h for h in HOMES if any((DATA / h / "home").rglob("*.json*"))]


@pytest.mark.parametrize("source", JSON_HOMES)
def test_a_lone_surrogate_escape_is_kept_as_a_replacement_character(
    source: str, tmp_path: Path
) -> None:
    """Half of an emoji's surrogate pair, escaped alone (`\\ud83d`), is what a tool that cut a
    string by UTF-16 units leaves: the text around it is kept, the half becomes U+FFFD (no
    store can hold a lone surrogate), and the home gives the sessions and rows it gives
    without it."""
    mark = " cut here \ud83d and on"
    plain, spiced = tmp_path / "plain", tmp_path / "spiced"
    shutil.copytree(DATA / source / "home", plain)
    shutil.copytree(plain, spiced)
    _spice_home(spiced, mark, escaped=True)
    before = _ledger(plain, tmp_path / "plain.db")
    after = _ledger(spiced, tmp_path / "spiced.db")
    assert {t: len(r) for t, r in after.items()} == {t: len(r) for t, r in before.items()}
    assert any("cut here \ufffd and on" in text for text in _texts(tmp_path / "spiced.db"))
    assert _ledger(spiced, tmp_path / "again.db") == after


EVERY_PIECE = " " + "".join(PIECES) + " and \ud83d cut"


def _fingerprints(address: str) -> dict[str, list[tuple[Any, ...]]]:
    store = open_store(address)
    try:
        return {t: [tuple(r.values()) for r in store.query(
            f"SELECT {t[:-1]}_id, fingerprint FROM {t} ORDER BY 1")] for t in TABLES}  # fmt: skip
    finally:
        store.close()


@pytest.mark.parametrize("source", JSON_HOMES)
def test_a_postgresql_ledger_holds_every_script_as_sqlite_does(
    source: str, tmp_path: Path, pg_schemas: Any
) -> None:
    """Every piece at once, a lone surrogate's escape among them, into a PostgreSQL ledger: the
    same rows and fingerprints as SQLite's, the text stored as written."""
    spiced = tmp_path / "spiced"
    shutil.copytree(DATA / source / "home", spiced)
    _spice_home(spiced, EVERY_PIECE, escaped=True)
    expected = _ledger(spiced, tmp_path / "spiced.db")
    address = str(pg_schemas())
    done = CliRunner().invoke(app, ["sync", "backfill", "--home", str(spiced), "--store",
                                    address, "-q"])  # fmt: skip
    assert done.exit_code == 0, done.output
    assert _fingerprints(address) == {t: [tuple(r) for r in rows] for t, rows in expected.items()}
    store = open_store(address)
    try:
        texts = [r["content"] for r in store.query("SELECT content FROM messages") if r["content"]]
    finally:
        store.close()
    assert any("".join(PIECES) + " and \ufffd cut" in text for text in texts)
