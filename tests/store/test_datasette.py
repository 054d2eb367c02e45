"""A SQLite ledger in Datasette, in a real browser: rows link to the rows they point at, the
conversation tables have a search box that finds, and the metadata `store datasette` prints
hides the bookkeeping tables. And an older ledger is brought to the same schema by migration."""

from __future__ import annotations

import json
import re
import shutil
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.browser import CHROMIUM, NO_CHROMIUM, chromium
from tests.conftest import DATA
from tracehouse.cli.app import app
from tracehouse.store import open_store
from tracehouse.store.sqlite.datasette import HIDDEN


@pytest.fixture(scope="module")
def ledger(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("datasette")
    home = root / "home"
    shutil.copytree(DATA / "claude" / "home", home)
    shutil.copytree(DATA / "codex" / "home" / ".codex", home / ".codex")
    _chinese_session(home / ".claude" / "projects" / "-tmp-demo")
    store = root / "ledger.db"
    result = CliRunner().invoke(
        app, ["sync", "backfill", "--home", str(home), "--store", str(store)]
    )
    assert result.exit_code == 0, result.output
    return store


CHINESE = "请帮我导出聊天记录到文件"
SESSION = "55555555-5555-4555-8555-555555555555"


def _chinese_session(project: Path) -> None:
    line = {"type": "user", "uuid": "zh1", "parentUuid": None, "sessionId": SESSION,
            "cwd": "/tmp/demo", "version": "2.1.114", "timestamp": "2026-03-02T10:00:00.000Z",
            "message": {"role": "user", "content": CHINESE}}  # fmt: skip
    (project / f"{SESSION}.jsonl").write_text(json.dumps(line, ensure_ascii=False) + "\n")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def datasette(ledger: Path) -> Iterator[dict[str, str]]:
    """Two Datasettes over the ledger: as `datasette ledger.db` alone, and with the metadata."""
    meta = ledger.with_name("th.json")
    printed = CliRunner().invoke(app, ["store", "datasette", "--store", str(ledger)])
    assert printed.exit_code == 0, printed.output
    meta.write_text(printed.output)
    urls, procs = {}, []
    for name, extra in (("plain", []), ("metadata", ["-m", str(meta)])):
        port = _free_port()
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "datasette", "serve", str(ledger), "-p", str(port), *extra],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        ))  # fmt: skip
        urls[name] = f"http://127.0.0.1:{port}"
    try:
        for url in urls.values():
            _wait(url)
        yield urls
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(timeout=10)


def _wait(url: str) -> None:
    deadline = time.monotonic() + 30
    while True:
        try:
            urllib.request.urlopen(url + "/-/versions.json", timeout=2).read()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


@pytest.fixture
def page() -> Iterator[Any]:
    if CHROMIUM is None:
        pytest.skip(NO_CHROMIUM)
    with chromium() as browser:
        yield browser.new_page()


def test_plain_datasette_links_rows_and_searches(
    ledger: Path, datasette: dict[str, str], page: Any
) -> None:
    base = datasette["plain"] + "/ledger"
    with sqlite3.connect(ledger) as conn:
        (prompt,) = conn.execute(
            "SELECT content FROM messages WHERE message_type = 'user' ORDER BY rowid LIMIT 1"
        ).fetchone()
    word = max(re.findall(r"[A-Za-z]{4,}", prompt), key=len).lower()
    page.goto(base + "/tool_calls?_size=5")
    # each tool call links to its session and message (foreign keys in the schema)
    assert page.locator('td.col-session_id a[href*="/ledger/sessions/"]').count() == 5
    messages = page.locator("td.col-message_id").all()
    linked = [c for c in messages if c.locator('a[href*="/ledger/messages/"]').count()]
    assert linked and all(c in linked or not c.inner_text().strip() for c in messages)
    page.goto(base + "/messages")
    page.fill("input#_search", word)
    page.locator("input#_search").press("Enter")
    page.wait_for_load_state()
    assert f"_search={word}" in page.url
    rows = page.locator("table.rows-and-columns tbody tr")
    assert rows.count() > 0
    assert all(word in r.inner_text().lower() for r in rows.all())
    # a session's page lists the rows that point at it
    page.locator("td.col-session_id a").first.click()
    page.wait_for_load_state()
    assert "/ledger/sessions/" in page.url
    assert page.locator('a[href*="/ledger/messages?session_id="]').count() == 1


def test_datasette_finds_chinese_the_way_its_tables_describe(datasette: dict[str, str]) -> None:
    """The index holds a run of Chinese a character a word: Datasette's box, which quotes each
    term it is given, finds the characters spaced apart (all of them, in any order), and the
    raw mode a spaced phrase; the characters written together find nothing, as the metadata's
    descriptions of the searchable tables say."""

    def found(query: str, raw: bool = False) -> int:
        url = datasette["metadata"] + "/ledger/messages.json?_shape=array&_search="
        url += urllib.parse.quote(query) + ("&_searchmode=raw" if raw else "")
        rows = json.loads(urllib.request.urlopen(url, timeout=10).read())
        return sum(CHINESE in (row["content"] or "") for row in rows)

    assert found("聊天记录") == 0
    assert found("聊 天 记 录") == 1
    assert found('"聊 天 记 录"', raw=True) == 1
    assert found('"记 聊 天 录"', raw=True) == 0  # a phrase keeps its order
    meta = json.loads(urllib.request.urlopen(datasette["metadata"] + "/-/metadata.json").read())
    for table in ("messages", "sessions", "tool_calls"):
        described = meta["databases"]["ledger"]["tables"][table]["description"]
        assert "聊 天 记 录" in described and "_searchmode=raw" in described


def test_the_metadata_hides_the_bookkeeping(datasette: dict[str, str], page: Any) -> None:
    page.goto(datasette["metadata"] + "/ledger")
    listed = page.locator("h3 a").all_inner_texts()
    assert {"sessions", "messages", "tool_calls", "turns"} <= set(listed)
    assert not set(HIDDEN) & set(listed), listed
    assert not {"sessions_fts", "messages_fts", "tool_calls_fts"} & set(listed), listed
    page.goto(datasette["plain"] + "/ledger")
    assert "search_marks" in page.locator("h3 a").all_inner_texts()
    meta = json.loads(urllib.request.urlopen(datasette["metadata"] + "/-/metadata.json").read())
    described = meta["databases"]["ledger"]["tables"]
    assert described["messages"]["fts_table"] == "messages_fts"  # the box needs no guess


def test_an_older_ledger_migrates_to_the_schema_a_new_one_has(ledger: Path, tmp_path: Path) -> None:
    """Schema 16 on a ledger made before it: the same CREATE text as a new ledger's, the rows
    and the search index untouched, and SQLite's own check passes."""
    fresh = open_store(tmp_path / "new.db")
    expected = _schema(fresh.conn)  # type: ignore[attr-defined]
    fresh.close()
    old = tmp_path / "old.db"
    shutil.copy(ledger, old)
    store = open_store(old)
    hits = len(store.search("pytest"))
    _as_before_schema_16(store.conn)  # type: ignore[attr-defined]
    store.close()
    store = open_store(old)
    conn = store.conn  # type: ignore[attr-defined]
    try:
        assert _schema(conn) == expected
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        links = conn.execute('SELECT "table", "from" FROM pragma_foreign_key_list(\'tool_calls\')')
        assert {("sessions", "session_id"), ("messages", "message_id")} <= set(links)
        assert hits and len(store.search("pytest")) == hits
    finally:
        store.close()


def _schema(conn: Any) -> list[tuple[str, str]]:
    return conn.execute("SELECT name, sql FROM sqlite_master ORDER BY name").fetchall()


def _as_before_schema_16(conn: Any) -> None:
    rows = conn.execute("SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL").fetchall()
    (version,) = conn.execute("PRAGMA schema_version").fetchone()
    conn.execute("BEGIN")
    conn.execute("PRAGMA writable_schema = ON")
    for name, sql in rows:
        old = re.sub(r" REFERENCES \w+\(\w+\)", "", sql).replace('content="', "content='")
        old = re.sub(r"content='(\w+)\"", r"content='\1'", old)
        conn.execute("UPDATE sqlite_master SET sql = ? WHERE name = ?", (old, name))
    conn.execute(f"PRAGMA schema_version = {version + 1}")
    conn.execute("PRAGMA writable_schema = OFF")
    conn.execute("DELETE FROM _sqlite_migrations WHERE name = 'm016_foreign_keys'")
    conn.execute("COMMIT")
