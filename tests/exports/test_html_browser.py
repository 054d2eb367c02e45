"""The HTML export in a real browser (the system's Chromium, driven by Playwright): pages load
from disk without a console error, a collapsed tool call opens on click, the index filters, and
a page fits a phone's width."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser import chromium, needs_chromium
from tests.conftest import DATA
from tests.store.factory import batch, item
from tracehouse.exports.documents import DocumentOptions, export_documents
from tracehouse.pipeline.options import SyncOptions
from tracehouse.pipeline.sync import sync
from tracehouse.reports.filters import SessionFilters
from tracehouse.store.sqlite.store import SqliteStore

pytestmark = [needs_chromium, pytest.mark.slow]  # a browser per module


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("site")
    store = SqliteStore(root / "ledger.db")
    sources = {
        "claude-code": [DATA / "claude" / "home" / ".claude"],
        "codex": [DATA / "codex" / "home" / ".codex"],
    }
    assert sync(store, SyncOptions(sources=sources)).ok
    store.import_batch(batch([item("script", 2, text="<script>alert(1)</script>")]))
    export_documents(store, root / "html", DocumentOptions("html"), SessionFilters())
    store.close()
    return root / "html"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as launched:
        yield launched


def open_page(browser: Any, path: Path, width: int = 1100) -> tuple[Any, list[str]]:
    page = browser.new_page(viewport={"width": width, "height": 800})
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("dialog", lambda d: errors.append(f"dialog: {d.message}"))
    page.goto(path.as_uri())
    return page, errors


def test_every_page_loads_without_errors(site: Path, browser: Any) -> None:
    for path in sorted(site.glob("*.html")):
        page, errors = open_page(browser, path)
        assert errors == [], (path.name, errors)
        page.close()


def test_a_collapsed_tool_call_opens_on_click(site: Path, browser: Any) -> None:
    page, errors = open_page(browser, site / "cc-script.html")
    call = page.locator("details.call").first
    assert call.get_attribute("open") is None
    assert not call.locator("pre.params").is_visible()
    call.locator("summary").click()
    assert call.get_attribute("open") is not None
    assert call.locator("pre.params").is_visible()
    assert (
        page.locator(".md, .text", has_text="<script>alert(1)</script>").count() == 2
    )  # shown, not run
    assert errors == []


def test_the_index_filters(site: Path, browser: Any) -> None:
    page, errors = open_page(browser, site / "index.html")
    rows = page.locator("#rows tr")
    total = rows.count()
    visible = "#rows tr:not([hidden])"
    page.fill("#q", "session script")
    assert page.locator(visible).count() == 1
    page.fill("#q", "")
    page.select_option("#provider", "codex")
    codex = page.locator(visible).count()
    assert 0 < codex < total
    assert all(r.get_attribute("data-provider") == "codex" for r in page.locator(visible).all())
    page.select_option("#provider", "")
    page.uncheck("#subagents")
    assert page.locator(visible).count() == total - page.locator("tr[data-subagent='1']").count()
    page.fill("#from", "2999-01-01")
    assert page.locator(visible).count() == 0
    assert page.locator("#shown").text_content() == f"0 of {total} sessions"
    assert errors == []


def test_a_page_fits_a_phone(site: Path, browser: Any) -> None:
    for path in [site / "index.html", *sorted(site.glob("c*.html"))[:5]]:
        page, errors = open_page(browser, path, width=380)
        assert page.evaluate("document.documentElement.scrollWidth") <= 380, path.name
        assert errors == []
        page.close()
