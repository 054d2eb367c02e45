"""`tracehouse search` and `sessions show --at` through typer's runner."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from tests.pipeline.helpers import make_home
from tracehouse.cli.app import app

runner = CliRunner()


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture
def ledger(tmp_path):
    ledger = tmp_path / "ledger.db"
    result = run("sync", "backfill", "--home", make_home(tmp_path), "--store", ledger)
    assert result.exit_code == 0, result.output
    return ledger


def test_a_search_prints_blocks_with_the_command_that_opens_each_hit(ledger):
    result = run("search", "division", "--mode", "lexical", "--store", ledger)
    assert result.exit_code == 0, result.output
    blocks = [b for b in result.stdout.strip().split("\n\n") if b]
    assert blocks
    for block in blocks:
        head, snippet, opener = block.splitlines()
        assert head.startswith("cc-") and " · claude-code · " in head
        assert "division" in snippet.lower()
        assert opener.strip().startswith("→ tracehouse sessions show cc-")


def test_json_hits_open_with_sessions_show_at(ledger):
    data = json.loads(run("search", "app.py", "--json", "--store", ledger).stdout)
    assert data["query"] == "app.py" and data["hits"]
    hit = next(h for h in data["hits"] if h["message_id"])
    assert {"id", "label", "score", "snippet", "highlights", "kind"} <= set(hit)
    shown = run("sessions", "show", hit["label"], "--at", hit["message_id"], "--store", ledger)
    assert shown.exit_code == 0, shown.output
    assert "▶ ## " in shown.stdout
    as_json = run(
        "sessions", "show", hit["label"], "--at", hit["message_id"], "--json", "--store", ledger
    )
    assert as_json.exit_code == 0, as_json.output
    opened = json.loads(as_json.stdout)
    assert opened["focus"] == hit["message_id"]
    assert hit["message_id"] in {m["message_id"] for m in opened["messages"]}


def test_filters_from_the_command_line(ledger):
    data = json.loads(
        run("search", "app", "--type", "tool", "--tool", "Read", "--json", "--store", ledger).stdout
    )
    assert data["hits"] and {h["tool_name"] for h in data["hits"]} == {"Read"}
    recent = run("search", "app", "--since", "1d", "--json", "--store", ledger)
    assert json.loads(recent.stdout)["hits"] == []  # the fixtures are from 2026-03-01


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--provider", "claude"], "known providers are claude-code, codex, cursor"),
        (["--type", "robot"], "--type 'robot': one of user, assistant"),
        (["--limit", "0"], "--limit 0: give a number from 1 to 1000"),
        (["--since", "last tuesday"], "--since 'last tuesday': give a date"),
        (["--session", "cc-nope"], "no session matches 'cc-nope'"),
    ],
)
def test_bad_options_are_one_line_and_exit_2(ledger, args, says):
    result = run("search", "app", *args, "--store", ledger)
    assert result.exit_code == 2
    assert says in result.stderr and "Traceback" not in result.output


def test_a_query_of_only_exclusions_says_why(ledger):
    result = run("search", "--store", ledger, "--", "-app")
    assert result.exit_code == 2 and "only exclusions" in result.stderr


def test_at_an_unknown_row_is_one_line(ledger):
    result = run("sessions", "show", "cc-11111111", "--at", "msg_nope", "--store", ledger)
    assert result.exit_code == 2 and "no such message or tool call" in result.stderr


def test_a_query_of_several_words_needs_no_quotes(ledger):
    """`search by zero` is the query `by zero`, as `search "by zero"` is (issue #44: the README's
    `search -- -foo bar` exited 2); an exclusion may lead after `--`."""
    quoted = run("search", "--store", ledger, "--json", "division by zero")
    unquoted = run("search", "--store", ledger, "--json", "division", "by", "zero")
    assert unquoted.exit_code == 0, unquoted.output
    assert unquoted.stdout == quoted.stdout
    excluded = run("search", "--store", ledger, "--json", "--", "-nothingsuch", "division")
    assert excluded.exit_code == 0 and json.loads(excluded.stdout)["hits"]


def test_a_search_says_how_many_rows_its_index_does_not_hold_yet(ledger):
    """As a first load killed before it adopted the indexes built beside it leaves a ledger."""
    import sqlite3

    assert (
        json.loads(run("search", "division", "--json", "--store", ledger).stdout)["unindexedRows"]
        == 0
    )
    with sqlite3.connect(ledger) as conn:
        conn.execute("UPDATE search_marks SET indexed_through = 0 WHERE name = 'messages_fts'")
        # what a fresh index holds: nothing
        conn.execute("INSERT INTO messages_fts (messages_fts) VALUES ('delete-all')")
        rows = conn.execute("SELECT count(*) FROM messages").fetchone()[0]
    result = run("search", "division", "--mode", "lexical", "--store", ledger)
    assert result.exit_code == 0
    assert f"note: {rows:,} rows are not in the search index yet" in result.stderr
    assert (
        json.loads(run("search", "division", "--json", "--store", ledger).stdout)["unindexedRows"]
        == rows
    )
    assert (
        run("sync", "backfill", "--home", ledger.parent / "home", "--store", ledger).exit_code == 0
    )
    again = run("search", "division", "--store", ledger)
    assert "note:" not in again.stderr and "division" in again.stdout.lower()


def test_the_printed_command_works_as_it_stands(ledger):
    """The `→` line names the ledger the search read (issue #70): copied, it opens the hit,
    where without `--store` it answered `no session matches`."""
    import shlex

    result = run("search", "division", "--mode", "lexical", "--store", ledger)
    opener = next(line for line in result.stdout.splitlines() if "→" in line)
    argv = shlex.split(opener.split("→", 1)[1])
    assert argv[:3] == ["tracehouse", "sessions", "show"] and argv[-2:] == ["--store", str(ledger)]
    opened = run(*argv[1:])
    assert opened.exit_code == 0, opened.output
    assert "division" in opened.stdout.lower()
