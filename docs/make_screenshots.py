"""Regenerates the screenshots in docs/ from the real logs in the fixtures.

    uv run python docs/make_screenshots.py [--corpus ../shared/fixtures]

It imports a few fixture homes into a fresh ledger, serves it (`tracehouse serve`), and has
Chromium (Debian's, driven by Playwright) photograph the pages a reader meets: the session list
wide and on a phone, a session with its Markdown, code and an edit's diff, the usage page, and
the HTML export of the same session; the session as `tracehouse open` shows it, reached through
its one-time link; and `tracehouse browse` in a terminal of 120×34 after a search as you type
(Textual's own SVG of the screen, photographed the same way).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from tests.gateway.server import Gateway, ledger_with_tokens  # noqa: E402

HOMES = ("iansherr-claude-code-log", "0h-n0-local-voice-assistant-codex", "XEFF09-dotfiles",
         "michaeljjacob-dotfiles", "haram-333-fineye", "EddieisxD-dotfiles")  # fmt: skip
SESSION = "cc-0d3a8e6f"  # a refactoring: Markdown replies, code, MultiEdit diffs


def cli(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "tracehouse.cli.app", *args], check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=HERE.parent.parent / "shared" / "fixtures")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="tracehouse-shots-") as tmp:
        ledger = str(Path(tmp) / "ledger.db")
        for home in HOMES:
            cli("sync", "backfill", "--home", str(args.corpus / "homes" / home), "--store", ledger,
                "-q")  # fmt: skip
        cli("export", "--store", ledger, "--format", "html", "--out", f"{tmp}/export", "-q")
        token = ledger_with_tokens(ledger, {"r": (f"docs-{uuid.uuid4().hex[:6]}", "read")})["r"]
        svg = Path(tmp) / "browse.svg"  # before Playwright, whose own event loop runs in here
        svg.write_text(_browsed(ledger), encoding="utf-8")
        gateway = Gateway(ledger, Path(tmp) / "gateway.log").start()
        try:
            with sync_playwright() as p:
                chromium = shutil.which("chromium") or "chromium"
                browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
                shots = [("gateway-list.png", "/", 1200, None, "light"),
                         ("gateway-list-phone.png", "/", 390, None, "dark"),
                         ("gateway-session.png", f"/s/{SESSION}", 1100, "pre.diff", "light"),
                         ("gateway-usage.png", "/usage", 1100, None, "light")]  # fmt: skip
                for name, path, width, at, scheme in shots:
                    page = browser.new_page(viewport={"width": width, "height": 1100},
                                            color_scheme=scheme)  # fmt: skip
                    page.goto(gateway.url + "/login")
                    page.fill("input[name=token]", token)
                    page.click("button[type=submit]")
                    page.goto(gateway.url + path)
                    _show(page, at)
                    page.screenshot(path=str(HERE / name))
                    page.close()
                page = browser.new_page(viewport={"width": 1000, "height": 1100})
                page.goto((Path(tmp) / "export" / f"{SESSION}.html").as_uri())
                _show(page, "pre.diff")
                page.screenshot(path=str(HERE / "export-html.png"))
                _opened(browser, ledger)
                page = browser.new_page(viewport={"width": 1240, "height": 820})
                page.goto(svg.as_uri())
                page.screenshot(path=str(HERE / "browse.png"))
                browser.close()
        finally:
            gateway.stop()
    print("screenshots written to", HERE)


def _opened(browser: object, ledger: str) -> None:
    """`tracehouse open SESSION`, followed through its one-time link."""
    import re

    command = [sys.executable, "-m", "tracehouse.cli.app", "open", SESSION, "--no-browser",
               "--store", ledger]  # fmt: skip
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    try:
        said = ""
        while "Ctrl-C" not in said:
            said += process.stderr.readline()  # type: ignore[union-attr]
        found = re.search(r"http://127\.0\.0\.1:\d+/login/once\S+", said)
        assert found, said
        page = browser.new_page(viewport={"width": 1100, "height": 900})  # type: ignore[attr-defined]
        for _ in range(50):  # the server starts after it prints its link
            try:
                page.goto(found.group(0))
                break
            except Exception:
                import time

                time.sleep(0.2)
        page.wait_for_url("**/s/**")
        _show(page, "pre.diff")
        page.screenshot(path=str(HERE / "open-session.png"))
        page.close()
    finally:
        process.terminate()
        process.wait(timeout=30)


def _browsed(ledger: str) -> str:
    """`tracehouse browse` after a search typed as a person types it: Textual's SVG."""
    import asyncio

    from tracehouse.search.embedders import Lazy
    from tracehouse.store import open_store
    from tracehouse.tui.browse import Browse
    from tracehouse.tui.readers import LedgerReader

    store = open_store(ledger)

    async def drive() -> str:
        browse = Browse(LedgerReader(store, ledger, Lazy("wordllama")), ledger)
        async with browse.run_test(size=(120, 34)) as pilot:
            await pilot.press("/", *"hide the group in the timeline")
            await pilot.pause(0.6)
            await pilot.press("enter", "r")
            await pilot.pause(0.3)
            return browse.export_screenshot(title="tracehouse browse")

    try:
        return asyncio.run(drive())
    finally:
        store.close()


def _show(page: object, at: str | None) -> None:
    """Open the tool calls and scroll to `at` (a selector), as a reader would."""
    if at is None:
        return
    page.evaluate("document.querySelectorAll('details.call').forEach(d => d.open = true)")  # type: ignore[attr-defined]
    page.evaluate(  # type: ignore[attr-defined]
        f"window.scrollBy(0, document.querySelector({at!r}).getBoundingClientRect().top - 200)"
    )


if __name__ == "__main__":
    main()
