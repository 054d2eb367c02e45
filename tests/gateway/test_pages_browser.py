"""The gateway's web view in a real browser (the system's Chromium, driven by Playwright): sign
in, the list loads and a filter narrows it, a session opens and a tool call expands, and a line
written while `sync live` pushes appears on the open page."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser import chromium, needs_chromium
from tests.conftest import DATA
from tests.gateway.appends import claude_line, main_file
from tests.gateway.server import push, pushed_gateway

pytestmark = [needs_chromium, pytest.mark.slow]  # a browser per module


@pytest.fixture
def site(tmp_path: Path) -> Iterator[dict[str, Any]]:
    home = tmp_path / "home"
    shutil.copytree(DATA / "claude" / "home", home)
    shutil.copytree(DATA / "codex" / "home" / ".codex", home / ".codex")
    gateway, pusher, reader = pushed_gateway(home, tmp_path)
    try:
        yield {"url": gateway.url, "home": home, "pusher": pusher, "reader": reader}
    finally:
        gateway.stop()


@pytest.fixture
def page(site: dict[str, Any]) -> Iterator[Any]:
    with chromium() as browser:
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


PLANTED = '<img src=x onerror="window.pwned=1"><script>window.pwned=2</script>'
IN_PATH = '<img src=x onerror="window.pwned=3">'  # a label: one path segment


def test_script_planted_in_a_label_a_query_or_a_transcript_never_runs(
    page: Any, site: dict[str, Any]
) -> None:
    """What a user typed, an agent wrote or a link carries is shown as text (issue #38: the
    session page reflected a label into HTML)."""
    from urllib.parse import quote, urlencode

    import httpx
    import orjson

    with main_file(site["home"]).open("ab") as out:
        out.write(claude_line("user", "x1", "u7", 30, {"role": "user", "content": PLANTED}))
    done = push(site["home"], site["url"], site["pusher"], "laptop")
    assert done.wait(timeout=60) == 0
    missing = page.goto(site["url"] + "/s/" + IN_PATH)
    assert missing is not None and missing.status == 404
    assert page.evaluate("window.pwned") is None
    page.goto(site["url"] + "/?" + urlencode({"q": PLANTED}))
    assert page.evaluate("window.pwned") is None
    page.goto(site["url"] + "/")
    page.locator('#rows a[href*="11111111"]').first.click()
    page.wait_for_selector("main")
    assert PLANTED in page.inner_text("main")  # shown, as text
    assert page.evaluate("window.pwned") is None
    answer = httpx.get(site["url"] + "/s/" + quote(IN_PATH, safe=""),
                       cookies={"tracehouse_token": site["reader"]})  # fmt: skip
    assert answer.status_code == 404 and answer.headers["content-type"].startswith("text/html")
    assert "<img" not in answer.text and "&lt;img" in answer.text
    headers = answer.headers
    assert "script-src 'nonce-" in headers["content-security-policy"]
    assert "frame-ancestors 'none'" in headers["content-security-policy"]
    assert headers["x-frame-options"] == "DENY" and headers["x-content-type-options"] == "nosniff"
    assert headers["referrer-policy"] == "same-origin"
    assert orjson.loads(httpx.get(site["url"] + "/v1/health").content)["ok"]


def test_sign_in_needs_its_form_and_stops_guessing(site: dict[str, Any]) -> None:
    import httpx

    with httpx.Client(base_url=site["url"]) as client:
        forged = client.post("/login", data={"token": site["reader"]})  # no form token
        assert forged.status_code == 403
        for _ in range(12):
            client.get("/login")
            wrong = client.post(
                "/login", data={"token": "thk_wrong", "csrf": client.cookies["tracehouse_csrf"]}
            )
        assert wrong.status_code == 429 and int(wrong.headers["retry-after"]) > 0
