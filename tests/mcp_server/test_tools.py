"""The five tools as functions over a real ledger (both backends): what a model reads, the
handles it follows to the next call, and the errors that name what to fix."""

from __future__ import annotations

import re

import pytest

from tracehouse.errors import TracehouseError
from tracehouse.mcp_server import tools
from tracehouse.reports.pricing import load_prices
from tracehouse.store import SessionStore


def test_a_search_hit_opens_the_session_at_the_hit(ledger: SessionStore) -> None:
    found = tools.search(ledger, "ZeroDivisionError", limit=5)
    assert found.startswith("1 hit for 'ZeroDivisionError'") or "hits for" in found
    opened = re.search(r'read_session\(session="([^"]+)", around="([^"]+)"\)', found)
    assert opened, found
    label, around = opened.groups()
    page = tools.read(ledger, label, around=around)
    focused = [line for line in page.splitlines() if line.startswith("### ▶")]
    assert len(focused) == 1, page
    assert "ZeroDivisionError" in page


def test_search_filters_and_its_errors(ledger: SessionStore) -> None:
    only_gemini = tools.search(ledger, "pytest", providers=["gemini-cli"])
    assert "gemini-cli" in only_gemini and "claude-code ·" not in only_gemini
    assert tools.search(ledger, "zzzqqqxxx").startswith("No hits for 'zzzqqqxxx'")
    for bad, message in [
        (dict(query=" "), "query: give words"),
        (dict(query="x", limit=51), "limit 51: from 1 to 50"),
        (dict(query="x", providers=["vim"]), "vim"),
        (dict(query="x", since="last tuesday"), "--since"),
        (dict(query="x", types=["poem"]), "poem"),
    ]:
        with pytest.raises(TracehouseError, match=re.escape(message)):
            tools.search(ledger, **bad)  # type: ignore[arg-type]


def test_sessions_come_a_page_at_a_time_with_the_count(ledger: SessionStore) -> None:
    whole = tools.list_sessions(ledger, limit=100, subagents=True)
    labels = re.findall(r"^\| ([a-z]{2}-[0-9a-z-]+) \|", whole, re.M)
    total = int(re.search(r"of (\d+),", whole).group(1))  # type: ignore[union-attr]
    assert len(labels) == total > 4
    pages: list[str] = []
    offset = 0
    while True:
        page = tools.list_sessions(ledger, limit=3, offset=offset, subagents=True)
        pages += re.findall(r"^\| ([a-z]{2}-[0-9a-z-]+) \|", page, re.M)
        after = re.search(r"list_sessions\(offset=(\d+)", page)
        if after is None:
            break
        offset = int(after.group(1))
    assert pages == labels  # every session once, in the same order
    without = tools.list_sessions(ledger, limit=100)
    assert "↳" not in without and "↳" in whole
    assert tools.list_sessions(ledger, offset=500).startswith("No sessions past 500")


def test_files_touched_finds_every_agents_way_of_naming_a_path(ledger: SessionStore) -> None:
    found = tools.touched(ledger, "app.py")
    # Claude Code's Read and its subagent's Edit, and Gemini's read_file (absolute_path)
    assert "read /tmp/demo/app.py (Read" in found
    assert "edited /tmp/demo/app.py (Edit" in found
    assert "read /home/dev/weather-app/app.py (read_file" in found
    narrowed = tools.touched(ledger, "demo/app.py")
    assert "weather-app" not in narrowed and "/tmp/demo/app.py" in narrowed
    patched = tools.touched(ledger, "/home/dev/app/package.json")
    assert "edited /home/dev/app/package.json (ApplyPatch" in patched
    assert "package-lock.json" not in patched  # a boundary, not a substring
    shop = tools.touched(ledger, "shop/cart.py", providers=["opencode"])
    assert "edited /home/dev/shop/cart.py (edit" in shop
    assert tools.touched(ledger, "nothing/here.rs").startswith("No tool call names")
    with pytest.raises(TracehouseError, match="path: give a file"):
        tools.touched(ledger, "/")


def test_files_touched_pages_newest_first(ledger: SessionStore) -> None:
    first = tools.touched(ledger, "app.py", limit=1)
    assert "files_touched(path='app.py', offset=1)" in first
    times = re.findall(r"^- (\d{4}-\d\d-\d\d \d\d:\d\d)", tools.touched(ledger, "app.py"), re.M)
    assert times == sorted(times, reverse=True) and len(times) >= 3


def test_usage_is_the_reports_table(ledger: SessionStore) -> None:
    table = tools.usage_report(ledger, load_prices(None), by="model")
    rows = [r for r in table.splitlines() if r.startswith("| ") and "---" not in r]
    assert rows[0].startswith("| model | agent | input")
    assert rows[-1].startswith("| **total** |")
    with pytest.raises(TracehouseError, match="usage 'hourly'"):
        tools.usage_report(ledger, load_prices(None), by="hourly")
