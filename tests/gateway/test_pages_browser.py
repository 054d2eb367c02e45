"""The gateway's web view in a real browser (the system's Chromium, driven by Playwright): sign
in, the list loads and a filter narrows it, a session opens and a tool call expands, and a line
written while `sync live` pushes appears on the open page."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import DATA
from tests.gateway.appends import claude_line, main_file
from tests.gateway.server import Gateway, make_token, push

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium on PATH (Debian: apt-get install -y chromium)"
)


@pytest.fixture
def site(tmp_path: Path) -> Iterator[dict[str, Any]]:
    home = tmp_path / "home"
    shutil.copytree(DATA / "claude" / "home", home)
    shutil.copytree(DATA / "codex" / "home" / ".codex", home / ".codex")
    store = str(tmp_path / "gateway.db")
    pusher = make_token(store, tmp_path, "laptop", "push")
    reader = make_token(store, tmp_path, "viewer", "read").read_text().strip()
    gateway = Gateway(store, tmp_path / "gateway.log").start()
    done = push(home, gateway.url, pusher, "laptop")
    assert done.wait(timeout=60) == 0, done.stderr.read() if done.stderr else ""
    try:
        yield {"url": gateway.url, "home": home, "pusher": pusher, "reader": reader}
    finally:
        gateway.stop()


@pytest.fixture
def page(site: dict[str, Any]) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1100, "height": 800})
        page.errors = []
        page.on("console", lambda m: page.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: page.errors.append(str(e)))
        page.goto(site["url"] + "/")
        page.fill("input[name=token]", site["reader"])
        page.click("button[type=submit]")
        page.wait_for_selector("#rows")
        yield page
        browser.close()


def test_the_list_filters_and_a_session_opens(page: Any, site: dict[str, Any]) -> None:
    rows = page.locator("#rows tr")
    total = rows.count()
    assert total >= 3
    page.select_option("select[name=provider]", "codex")
    page.click("button[type=submit]")
    page.wait_for_load_state()
    codex = page.locator("#rows tr")
    assert 0 < codex.count() < total
    assert all(r.get_attribute("data-provider") == "codex" for r in codex.all())
    page.goto(site["url"] + "/")
    page.locator('#rows a[href*="11111111"]').first.click()
    page.wait_for_selector("main")
    call = page.locator("details.call").first
    assert call.get_attribute("open") is None
    call.locator("summary").click()
    assert call.get_attribute("open") is not None
    assert page.errors == []


def test_a_line_appended_during_sync_live_appears_on_the_open_page(
    page: Any, site: dict[str, Any]
) -> None:
    live = push(site["home"], site["url"], site["pusher"], "laptop", mode="live")
    try:
        page.locator('#rows a[href*="11111111"]').first.click()
        page.wait_for_selector("main")
        parent = "u7"
        for n, patience_ms in enumerate((30_000, 2_000)):  # the first waits for the watcher
            text = f"appended while watching {n}"
            line = claude_line("user", f"w{n}", parent, 10 + n, {"role": "user", "content": text})
            with main_file(site["home"]).open("ab") as out:
                out.write(line)
            parent = f"w{n}"
            page.get_by_text(text).wait_for(timeout=patience_ms)
        assert page.errors == []
    finally:
        live.terminate()
        assert live.wait(timeout=30) == 0, live.stderr.read() if live.stderr else ""
