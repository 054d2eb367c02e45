"""Every command tracehouse prints or serves is safe to paste (DESIGN §9, issue #63): built as
an argument list, shown with shell quoting, never holding a control character; and whatever a
ledger holds is shown with its control characters and bidirectional overrides escaped, in the
terminal, on the web page and to an agent over MCP."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from tests.security.team import UUID_A, push, read, session_item
from tracehouse.cli.app import app
from tracehouse.resume.plan import hint
from tracehouse.shown import command_line, escaped, operands

runner = CliRunner()
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
HOSTILE = ("$(id)", "`id`", "; rm -rf ~", "&&", "|", ">", "'", '"', "\\", "*", " ", "-",
           "--exec", "\x1b]0;owned\x07", "\x1b[2J", "\u202e", "\u2066", "\n", "\r", "\t",
           "\x00", "\x9b", "~", "#", "!", "%", "日本")  # fmt: skip
words = st.lists(st.sampled_from(HOSTILE) | st.text(max_size=6), min_size=1, max_size=5).map(
    "".join
)


@given(argv=st.lists(words, min_size=1, max_size=4), cwd=st.none() | words)
@settings(max_examples=400, deadline=None)
def test_a_printed_command_splits_back_into_its_arguments(argv: list[str], cwd: str | None) -> None:
    line = command_line(argv, cwd)
    if line is None:  # refused: some argument holds a character no quoting shows safely
        assert any(RAW.search(w) or "\n" in w or "\t" in w for w in [*argv, cwd or ""])
        return
    assert not RAW.search(line)
    expected = argv if cwd is None else ["cd", cwd, "&&", *argv]
    assert shlex.split(line) == expected


@given(values=st.lists(words, min_size=1, max_size=3))
def test_a_value_is_never_read_as_an_option(values: list[str]) -> None:
    argv = operands(["--in", "claude-code"], values)
    after = argv[argv.index("--") + 1 :] if "--" in argv[:3] else argv[2:]
    assert after == values
    assert all(not v.startswith("-") for v in argv[2:3]) or argv[2] == "--"


@given(label=words, source=words, workspace=words, provider=st.sampled_from(
    ["claude-code", "codex", "gemini-cli", "opencode", "cursor", "aider"]))  # fmt: skip
@settings(max_examples=300, deadline=None)
def test_every_resume_hint_is_safe_to_paste(
    label: str, source: str, workspace: str, provider: str, tmp_path_factory: Any
) -> None:
    present = tmp_path_factory.mktemp("p") / "x.jsonl"
    present.write_text("")
    session = {"source_provider": provider, "label": label, "source_session_id": source,
               "session_id": "ses_" + "0" * 32, "workspace_path": workspace,
               "source_path": str(present), "is_subagent": False}  # fmt: skip
    line = hint(session)
    assert not RAW.search(line)
    words_ = shlex.split(line)
    if words_[0] == "tracehouse":
        ref = words_[-1]
        assert ref in (label, "ses_" + "0" * 32) and not ref.startswith("-")
    else:  # the agent's own command: its id has the agent's shape
        assert source in words_ and not source.startswith("-")


EVIL_PATH = "/tmp/\x1b]0;owned\x07\x1b[2Jwork\u202eexe.txt"
EVIL_TITLE = "fix \x1b[31mred\x1b[0m \u202eevil\u202c and [/] markup"


def _evil_ledger(team: Any) -> str:
    item = session_item("claude-code", UUID_A, text=f"look at {EVIL_PATH}", title=EVIL_TITLE,
                        workspacePath=EVIL_PATH, labelHint="evil")  # fmt: skip
    [result] = push(team, "bob", item)
    return str(result["sessionLabel"])


def test_the_terminal_shows_control_characters_escaped(team: Any, tmp_path: Path) -> None:
    label = _evil_ledger(team)
    for args in (["sessions", "show", label], ["sessions", "list"], ["search", "look"],
                 ["resume", label, "--dry-run", "--in", "codex"]):  # fmt: skip
        env = {"HOME": str(tmp_path)}
        (tmp_path / ".codex").mkdir(exist_ok=True)
        done = runner.invoke(app, [*args, "--store", team.address], env=env)
        assert done.exit_code == 0, (args, done.output)
        assert not RAW.search(done.output), (args, done.output)
    shown = runner.invoke(app, ["sessions", "show", label, "--store", team.address]).output
    assert "\\x1b]0;owned\\x07" in shown and "\\u202e" in shown


def test_the_web_page_and_mcp_show_control_characters_escaped(team: Any) -> None:
    label = _evil_ledger(team)
    page = read(team, f"/s/{label}")
    assert page.status_code == 200
    assert not RAW.search(page.text) and escaped(EVIL_PATH).replace("\\", "\\") in page.text
    listing = read(team, "/")
    assert listing.status_code == 200 and not RAW.search(listing.text)
    from tracehouse.mcp_server.server import build_server, local_dispatch

    class Ledger:
        async def run(self, work: Any) -> Any:
            from tracehouse.store import open_store

            store = open_store(team.address)
            try:
                return work(store)
            finally:
                store.close()

    from tracehouse.mcp_server.server import call_once

    server = build_server(local_dispatch(Ledger()))
    for tool, args in (("read_session", {"session": label}), ("search", {"query": "look"}),
                       ("list_sessions", {})):  # fmt: skip
        failed, text = call_once(server, tool, args)
        assert not failed, text
        assert not RAW.search(text), (tool, text)
        assert "\\x1b" in text or tool == "list_sessions"


def test_an_old_label_with_a_slash_is_reachable_at_its_url(team: Any) -> None:
    label = _evil_ledger(team)
    from tracehouse.store import open_store

    store = open_store(team.address)
    try:
        store.write(lambda tx: tx.execute("UPDATE sessions SET label = ? WHERE label = ?",
                                          ["old/with-slash", label]))  # fmt: skip
    finally:
        store.close()
    assert read(team, "/s/old%2Fwith-slash").status_code == 200
    assert read(team, "/s/old%2Fwith-slash/version").status_code == 200
    assert json.loads(read(team, "/s/old%2Fwith-slash/version").text)["fingerprint"]


STYLED = ("\x1b[38;2;153;153;153m⛁ System prompt: 3.1k tokens\x1b[39m, Running"
          " \x1b[1mPostToolUse\x1b[22m…")


def test_terminal_styling_is_dropped_everywhere_and_nothing_else_is_hidden(
    team: Any, tmp_path: Path
) -> None:
    """Claude Code's `/context` output and hook notices hold a terminal's colour codes: shown
    as `[38;2;…m` on pages and in exports before (issue #70). They are dropped on every
    surface; a sequence that is not styling stays escaped, in sight."""
    item = session_item("claude-code", UUID_A, text=f"{STYLED} \x1b]0;title\x07",
                        labelHint="styled")  # fmt: skip
    push(team, "bob", item)
    clean = "⛁ System prompt: 3.1k tokens, Running PostToolUse…"
    shown = runner.invoke(app, ["sessions", "show", "styled", "--store", team.address]).output
    page = read(team, "/s/styled").text
    out = tmp_path / "out"
    for fmt in ("markdown", "html"):
        done = runner.invoke(app, ["export", "--format", fmt, "-o", str(out / fmt),
                                   "--store", team.address, "-q"])  # fmt: skip
        assert done.exit_code == 0, done.output
    exported = [
        p.read_text() for p in out.rglob("*") if p.is_file() and p.suffix in (".md", ".html")
    ]
    for text in (shown, page, *exported):
        assert not RAW.search(text) and "[38;2" not in text and "[39m" not in text
        assert "\\x1b]0;title\\x07" in text
    assert clean in shown and any(clean in text for text in exported)


def test_a_label_ending_in_a_newline_is_named_by_the_session_id(tmp_path: Path) -> None:
    """Found by the property above: `^…$` let `cc-1\\n` pass as a label's shape, and the hint
    that could not show it printed `None`."""
    present = tmp_path / "x.jsonl"
    present.write_text("")
    session = {"source_provider": "gemini-cli", "label": "cc-1\n", "source_session_id": "s",
               "session_id": "ses_" + "0" * 32, "workspace_path": "w",
               "source_path": str(present), "is_subagent": False}  # fmt: skip
    assert hint(session) == "tracehouse resume --in claude-code ses_" + "0" * 32
