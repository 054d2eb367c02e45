"""`sessions show`: attribution headings as the seeds render them, and stored JSON it cannot
read shown as unreadable, never as a traceback."""

from __future__ import annotations

import json
import shutil
import sqlite3

from typer.testing import CliRunner

from tests.conftest import DATA
from tracehouse.cli.app import app

runner = CliRunner()
CODEX = DATA / "codex" / "home"
PARENT = "019c0000-0000-7000-8000-000000000002"
REVIEW = "019c0000-0000-7000-8000-000000000003"


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


def codex_ledger(tmp_path, originator: str = "codex-tui"):
    home = tmp_path / "home"
    shutil.copytree(CODEX, home)
    if originator != "codex-tui":
        for path in (home / ".codex" / "sessions").rglob(f"*{PARENT}.jsonl"):
            path.write_text(path.read_text().replace('"codex-tui"', f'"{originator}"'))
    ledger = tmp_path / "ledger.db"
    result = run("sync", "backfill", "--home", home, "--store", ledger, "--source", "codex")
    assert result.exit_code == 0, result.output
    return ledger


def headings(result) -> list[str]:
    assert result.exit_code == 0, result.output
    return [line for line in result.stdout.splitlines() if line.startswith("## User")]


def test_typed_input_carries_no_attribution_line(tmp_path):
    ledger = codex_ledger(tmp_path)
    shown = headings(run("sessions", "show", PARENT, "--store", ledger))
    assert shown[:-1] and all(h.startswith("## User [") for h in shown[:-1])
    assert shown[-1].startswith("## User (via review) [")  # the `/review` request


def test_exec_prompts_and_review_children_name_their_origin_by_label(tmp_path):
    ledger = codex_ledger(tmp_path, originator="codex_exec")
    shown = headings(run("sessions", "show", PARENT, "--store", ledger))
    assert shown[:-1] and all(h.startswith("## User (via exec) [") for h in shown[:-1])
    parent_label = "cx-" + PARENT.replace("-", "")[-8:]
    child = headings(run("sessions", "show", REVIEW, "--store", ledger))
    assert child[0].startswith(f"## User (from {parent_label} via review) [")


def test_unreadable_stored_json_is_said_not_raised(tmp_path):
    ledger = codex_ledger(tmp_path)
    with sqlite3.connect(ledger) as conn:
        conn.execute("UPDATE messages SET meta = '{\"source\": tru', metadata = '[1, 2'")
        conn.execute("UPDATE tool_calls SET params = 'NaN garbage'")
    result = run("sessions", "show", PARENT, "--store", ledger)
    assert result.exit_code == 0, result.output
    assert "attribution unreadable: not JSON" in result.stdout
    data = json.loads(run("sessions", "show", PARENT, "--store", ledger, "--json").stdout)
    message = data["messages"][0]
    assert message["meta"]["unreadable"].startswith("not JSON")
    assert message["meta"]["excerpt"] == '{"source": tru'
    assert message["metadata"]["unreadable"].startswith("not JSON")


def test_oversized_stored_json_is_not_decoded(tmp_path):
    ledger = codex_ledger(tmp_path)
    huge = json.dumps({"source": "exec", "pad": "x" * (2 << 20)})
    with sqlite3.connect(ledger) as conn:
        conn.execute("UPDATE messages SET meta = ?", [huge])
    result = run("sessions", "show", PARENT, "--store", ledger)
    assert result.exit_code == 0, result.output
    assert "attribution unreadable: 2,097," in result.stdout


def test_verbose_shows_each_turns_tokens_and_duration(tmp_path):
    ledger = codex_ledger(tmp_path)
    plain = run("sessions", "show", PARENT, "--store", ledger)
    verbose = run("sessions", "show", PARENT, "--store", ledger, "-v")
    assert verbose.exit_code == 0, verbose.output
    assert "## Turns" not in plain.stdout
    lines = verbose.stdout.splitlines()
    at = lines.index(next(line for line in lines if line.startswith("## Turns")))
    header, first = lines[at + 1].split(), lines[at + 2]
    assert header[:3] == ["turn", "started", "took"] and header[-1] == "total"
    import sqlite3

    conn = sqlite3.connect(ledger)
    total, seq = conn.execute(
        "SELECT t.total_tokens, t.seq FROM turns t JOIN sessions s USING (session_id)"
        " WHERE s.source_session_id = ? ORDER BY t.seq LIMIT 1",
        (PARENT,),
    ).fetchone()
    assert first.split()[0] == str(seq)
    assert first.rstrip().endswith(f"{total:,}" if total is not None else "—")


def test_verbose_shows_long_parameters_and_results_uncut() -> None:
    from tracehouse.exports.transcript import _call

    command = "echo " + "x" * 500
    call = {"tool_name": "Bash", "params": json.dumps({"command": command}), "status": "ok",
            "result": "\n".join(f"line {n}" for n in range(30)), "tool_call_id": "t"}  # fmt: skip
    brief = list(_call(call, None, 600))
    assert command not in brief[0] and len(brief) == 13  # the call, 12 lines of its result
    full = list(_call(call, None, 100_000))
    assert command in full[0] and len(full) == 31


def test_an_edit_shows_its_file_and_its_diff_cut_unless_verbose() -> None:
    from tracehouse.exports.transcript import DIFF_LINES, DIFF_MARK, _call

    old = "\n".join(f"a = {n}" for n in range(40))
    params = {"file_path": "/w/app.py", "old_string": old, "new_string": old.replace("a", "b")}
    call = {"tool_name": "Edit", "params": json.dumps(params), "status": "completed",
            "result": "updated", "tool_call_id": "t"}  # fmt: skip
    brief = list(_call(call, None, 600))
    assert brief[0] == "  → Edit /w/app.py  [completed]"
    diff = [line[4 + len(DIFF_MARK):] for line in brief if line.startswith("    " + DIFF_MARK)]
    assert diff[:3] == ["--- a/w/app.py", "+++ b/w/app.py", "@@ -1,40 +1,40 @@"]
    assert len(diff) == DIFF_LINES + 1 and diff[-1].startswith("… 59 more lines")
    assert brief[-1] == "    │ updated"
    full = list(_call(call, None, 100_000))
    assert sum(line.startswith("    " + DIFF_MARK + "+b") for line in full) == 40


def test_an_empty_list_says_so_and_last_names_the_latest_session(tmp_path) -> None:
    """A list with nothing to show says why instead of printing a header alone; `last` and
    `last~N` name sessions wherever a session is named (issue #70)."""
    ledger = codex_ledger(tmp_path)
    empty = run("sessions", "list", "--since", "1h", "--store", ledger)
    assert empty.exit_code == 0 and "label" not in empty.stdout
    assert "no sessions match these filters" in empty.output
    latest = run("sessions", "show", "last", "--store", ledger, "--json")
    listed = run("sessions", "list", "--json", "--no-subagents", "--store", ledger)
    assert json.loads(latest.stdout)["session"]["label"] == json.loads(listed.stdout)[0]["label"]
    before = run("sessions", "show", "last~1", "--store", ledger, "--json")
    assert json.loads(before.stdout)["session"]["label"] == json.loads(listed.stdout)[1]["label"]


def test_the_listed_sessions_carry_the_provenance_the_gateway_lists(tmp_path) -> None:
    """`sessions list --json` has every field the gateway's `/v1/sessions` has (issue #70): the
    source id and workspace, the machine, first and last import, the fingerprint."""
    from tracehouse.gateway.views import _SUMMARY

    ledger = codex_ledger(tmp_path)
    listed = json.loads(run("sessions", "list", "--json", "--store", ledger).stdout)
    assert listed and all(set(_SUMMARY.values()) <= set(row) for row in listed)
    assert all(row["first_imported_at"] and row["fingerprint"] for row in listed)


def test_show_since_leaves_the_earlier_messages_out_and_counts_them(tmp_path) -> None:
    """`sessions show LABEL --since TIME` (issue #70): the messages from then on, in JSON and
    as text, with a line counting those before; --since with --at is refused in one line."""
    ledger = codex_ledger(tmp_path)
    label = json.loads(run("sessions", "list", "--json", "--store", ledger).stdout)[0]["label"]
    whole = json.loads(run("sessions", "show", label, "--json", "--store", ledger).stdout)
    times = sorted(m["created_at"] for m in whole["messages"])
    middle = times[len(times) // 2]
    cut = run("sessions", "show", label, "--json", "--since", middle, "--utc", "--store", ledger)
    kept = json.loads(cut.stdout)["messages"]
    assert kept and all(m["created_at"] >= middle for m in kept)
    assert len(kept) == sum(t >= middle for t in times) < len(times)
    text = run("sessions", "show", label, "--since", middle, "--utc", "--store", ledger).stdout
    assert f"… {sum(t < middle for t in times):,} earlier messages" in text
    both = run("sessions", "show", label, "--since", "1h", "--at", "x", "--store", ledger)
    assert both.exit_code == 2 and "--since and --at" in both.output
    bad = run("sessions", "show", label, "--since", "soon", "--store", ledger)
    assert bad.exit_code == 2 and "--since" in bad.output and "Traceback" not in bad.output


def test_usage_without_a_period_is_the_daily_report_in_ccusages_columns(tmp_path) -> None:
    """`tracehouse usage` alone (issue #68: it failed with "Missing argument 'period'")."""
    ledger = codex_ledger(tmp_path)
    shown = run("usage", "--store", ledger)
    assert shown.exit_code == 0, shown.output
    lines = shown.stdout.splitlines()
    assert lines[0].startswith("input: no cache served")
    assert lines[1].split()[:7] == ["date", "provider", "input", "cache", "write", "cache", "read"]
    assert run("usage", "daily", "--store", ledger).stdout == shown.stdout
    refused = run("usage", "monthly", "--live", "--store", ledger)
    assert refused.exit_code == 2 and "only with `usage blocks`" in refused.output
    blocks = json.loads(run("usage", "blocks", "--json", "--store", ledger).stdout)["blocks"]
    assert blocks and all(b["end"] > b["start"] for b in blocks)
