"""Reading in a real browser (the system's Chromium, driven by Playwright), on a gateway holding
the tests/data agents and a session planted with what a transcript may hold: Markdown renders as
Markdown, code highlighted, an edit as a diff, a long result folded and fetched when opened; an
injected `<script>` or `onerror` — in a message, a title or a search — never runs; the list
pages; a phone-width page has no horizontal scroll; and axe-core finds no accessibility
violation at all on the list, a session and the usage page, light and dark."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser import chromium, needs_chromium
from tests.conftest import DATA, REPO
from tests.gateway.server import pushed_gateway

AXE = REPO / "conformance" / "npm" / "node_modules" / "axe-core" / "axe.min.js"
pytestmark = [needs_chromium, pytest.mark.slow]  # a browser per module
SID = "99999999-9999-4999-8999-999999999999"
ATTACK = '<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2">'
URL = "https://example.com/a/long/url/" + "x" * 60 + "?and=a&query=string&that=goes&on=and&on"
REPLY = f"""Here is the **fix**:

| file | change |
|---|---|
| app.py | divide safely |

```python
def safe(a, b):
    return a / b if b else 0
```

```text
{URL}
```

A word longer than a phone: {"Supercalifragilistic" * 5}; and `{"an_inline_code_span_" * 4}`.
"""
LONG = "\n".join(f"line {n} of the test output" for n in range(60))


def planted_session(project: Path) -> None:
    """A Claude Code session in its own format: a hostile prompt (which becomes the title), a
    Markdown reply, an Edit call, and a long result."""
    base = {"isSidechain": False, "userType": "external", "cwd": "/tmp/demo", "sessionId": SID,
            "version": "2.1.114", "entrypoint": "cli"}  # fmt: skip

    def line(kind: str, uuid: str, parent: str | None, at: str, message: dict) -> str:
        return json.dumps(
            {
                **base,
                "type": kind,
                # uuids of its own: another session's, in the same project, read as replays
                "uuid": f"plant-{uuid}",
                "parentUuid": parent and f"plant-{parent}",
                "timestamp": f"2026-03-02T10:00:0{at}.000Z",
                "message": message,
            }
        )

    def reply(mid: str, content: list) -> dict:
        return {"id": f"plant-{mid}", "type": "message", "role": "assistant",
                "model": "claude-sonnet-4-5", "content": content, "stop_reason": "end_turn",
                "usage": {"input_tokens": 10, "output_tokens": 5}}  # fmt: skip

    edit = {"type": "tool_use", "id": "toolu_edit", "name": "Edit",
            "input": {"file_path": "/tmp/demo/app.py", "old_string": "print(1/0)",
                      "new_string": "print(safe(1, 0))"}}  # fmt: skip
    command = "pytest --maxfail=1 -x tests/" + "a_very_long_test_module_name_" * 6 + ".py"
    run = {"type": "tool_use", "id": "toolu_run", "name": "Bash", "input": {"command": command}}
    lines = [
        line("user", "u1", None, "0", {"role": "user", "content": f"Fix app.py {ATTACK}"}),
        line("assistant", "a1", "u1", "1", reply("m1", [{"type": "text", "text": REPLY}, edit])),
        line("user", "r1", "a1", "2", {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_edit", "content": "edited"}]}),
        line("assistant", "a2", "r1", "3", reply("m2", [run])),
        line("user", "r2", "a2", "4", {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_run", "content": LONG}]}),
        line("assistant", "a3", "r2", "5", reply("m3", [{"type": "text", "text": ATTACK}])),
    ]  # fmt: skip
    project.mkdir(parents=True, exist_ok=True)
    (project / f"{SID}.jsonl").write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    tmp_path = tmp_path_factory.mktemp("reading")
    home = tmp_path / "home"
    for source in ("claude", "codex", "pi", "copilot", "qwen"):
        shutil.copytree(DATA / source / "home", home, dirs_exist_ok=True)
    planted_session(home / ".claude" / "projects" / "-tmp-demo")
    gateway, _, reader = pushed_gateway(home, tmp_path)
    try:
        yield {"url": gateway.url, "reader": reader}
    finally:
        gateway.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as launched:
        yield launched


def signed_in(browser: Any, site: dict[str, Any], width: int = 1100, **options: Any) -> Any:
    page = browser.new_page(viewport={"width": width, "height": 900}, **options)
    page.errors = []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    page.on("dialog", lambda d: page.errors.append(f"dialog: {d.message}"))
    page.goto(site["url"] + "/login")
    page.fill("input[name=token]", site["reader"])
    page.click("button[type=submit]")
    page.wait_for_selector("#rows")
    return page


def test_a_transcript_renders_markdown_code_a_diff_and_a_folded_result(browser, site) -> None:
    page = signed_in(browser, site)
    page.goto(site["url"] + "/s/cc-99999999")
    reply = page.locator("article.assistant .md").first
    assert reply.locator("strong", has_text="fix").count() == 1
    assert reply.locator("table td", has_text="divide safely").count() == 1
    assert reply.locator("pre code .hl-k", has_text="def").count() == 1  # highlighted
    edit = page.locator("details.call", has_text="Edit")
    edit.locator("summary").first.click()
    assert edit.locator(".d-del", has_text="print(1/0)").is_visible()
    assert edit.locator(".d-add", has_text="print(safe(1, 0))").is_visible()
    run = page.locator("details.call", has_text="Bash")
    assert "result" in run.locator("summary").first.text_content()  # its size on the fold
    run.locator("summary").first.click()
    fold = run.locator("details.result")
    assert fold.locator("pre").count() == 0  # not on the page until opened
    fold.locator("summary").click()
    page.wait_for_selector("details.result pre.result")
    assert "line 59 of the test output" in fold.locator("pre").text_content()
    assert page.locator("a.permalink").count() >= 3
    assert page.errors == []


def test_injected_script_never_runs(browser, site) -> None:
    page = signed_in(browser, site)
    for path in ("/", "/s/cc-99999999", f"/?q={ATTACK}", "/usage"):
        page.goto(site["url"] + path)
        assert page.evaluate("window.pwned") is None, path
    page.goto(site["url"] + "/s/cc-99999999")
    assert page.locator("article.user .md", has_text="<script>").count() == 1  # shown as text
    page.goto(site["url"] + "/")
    assert page.locator("#rows a", has_text="<script>").count() == 1  # the title, as text
    assert page.errors == []


def test_the_list_pages(browser, site) -> None:
    from tracehouse.gateway.pages import PAGE

    page = signed_in(browser, site)
    shown = page.locator("#shown").text_content()
    total = int(shown.split(" of ")[1].split()[0]) if " of " in shown else 0
    assert total > 0 and page.locator("#rows tr").count() == min(total, PAGE)
    page.goto(site["url"] + "/?sort=tokens")
    tokens = [t.replace(",", "") for t in page.locator("td[data-label=tokens]").all_text_contents()]
    counted = [int(t) for t in tokens if t.isdigit()]
    assert counted == sorted(counted, reverse=True)
    page.goto(site["url"] + "/?provider=pi")
    assert page.locator("#shown").text_content().endswith(" of 1 sessions")


@pytest.mark.parametrize("width", [320, 400])
def test_a_phone_has_no_horizontal_scroll(browser, site, width) -> None:
    """A long line in a code block, a long word, URL or command scroll within their own box
    (or wrap), never the page (issue #70: a session page was 27 px wider than a phone)."""
    page = signed_in(browser, site, width=width)
    for path in ("/", "/s/cc-99999999", "/usage"):
        page.goto(site["url"] + path)
        page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
        assert page.evaluate("document.documentElement.scrollWidth") <= width, path


def test_no_accessibility_violation(browser, site) -> None:
    if not AXE.exists():
        pytest.skip(f"axe-core not installed ({AXE}): npm ci --prefix conformance/npm")
    # axe is added to the page from outside: the page's own policy admits only its own script
    page = signed_in(browser, site, bypass_csp=True)
    for path in ("/", "/s/cc-99999999", "/usage"):
        for scheme in ("light", "dark"):
            page.emulate_media(color_scheme=scheme)
            page.goto(site["url"] + path)
            page.add_script_tag(path=str(AXE))
            found = page.evaluate("axe.run(document).then(r => r.violations.map(v => "
                                  "[v.id, v.impact, v.nodes.length]))")  # fmt: skip
            assert found == [], (path, scheme, found)  # of any impact, not only serious
