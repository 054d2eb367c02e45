"""Regenerates the screenshots in docs/ from the real logs in the fixtures.

    uv run python docs/make_screenshots.py [--corpus ../shared/fixtures]

It imports a few fixture homes into a fresh ledger, serves it (`tracehouse serve`), and has
Chromium (Debian's, driven by Playwright) photograph the pages a reader meets: the session list
wide and on a phone, a session with its Markdown, code and an edit's diff, the usage page, and
the HTML export of the same session.
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
                browser.close()
        finally:
            gateway.stop()
    print("screenshots written to", HERE)


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
