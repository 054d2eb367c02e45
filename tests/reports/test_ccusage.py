"""Blocks and days beside ccusage 17.2.1 (issue #68), run on the Claude Code fixture homes as a
ccusage user runs it (`--offline`, the home's `.claude`, times in UTC): the same 5-hour blocks,
the same days, and the same fresh input, cache writes and cache reads in each. Output differs on
one home and every count on another, for the two reasons docs/usage.md gives: ccusage keeps the
first (partial) output count of a response written over several lines, and counts a response
as often as it is written when its lines carry no request id."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.agents.installed import NODE_MODULES, required
from tracehouse.cli.app import app

pytestmark = pytest.mark.slow
HOMES = {
    "kvsankar-agent-history": "same",
    "iansherr-claude-code-log": "first output count",  # ccusage's output is less
    "a331468564-claude-codex-chat-archives": "no request id",  # ccusage counts repeats
}


def _ccusage(report: str, claude: Path) -> dict:
    binary = required(NODE_MODULES / ".bin" / "ccusage", "ccusage")
    if shutil.which("node") is None:
        pytest.skip("no node on PATH")
    env = {**os.environ, "CLAUDE_CONFIG_DIR": str(claude), "TZ": "UTC"}
    done = subprocess.run([str(binary), report, "--offline", "--json"], env=env,
                          capture_output=True, text=True, timeout=120, check=True)  # fmt: skip
    return json.loads(done.stdout)


def _ours(report: str, home: Path, ledger: Path) -> dict:
    runner = CliRunner()
    synced = runner.invoke(app, ["sync", "backfill", "--home", str(home), "--store", str(ledger),
                                 "--source", "claude-code", "-q"])  # fmt: skip
    assert synced.exit_code == 0, synced.output
    shown = runner.invoke(app, ["usage", report, "--json", "--utc", "--store", str(ledger)])
    assert shown.exit_code == 0, shown.output
    return json.loads(shown.stdout)


def _compare(why: str, theirs: dict, ours: dict) -> None:
    same = ("freshInputTokens", "cacheWriteTokens", "cacheReadTokens")
    # ccusage names them one way in `blocks`, another in `daily`
    write = theirs.get("cacheCreationInputTokens", theirs.get("cacheCreationTokens"))
    read = theirs.get("cacheReadInputTokens", theirs.get("cacheReadTokens"))
    counted = [theirs["inputTokens"], write, read]
    if why == "no request id":  # each response counted once here, up to six times there
        assert all(a >= b for a, b in zip(counted, (ours[k] for k in same), strict=True))
        assert theirs["outputTokens"] >= ours["outputTokens"]
        return
    assert counted == [ours[k] for k in same]
    if why == "same":
        assert theirs["outputTokens"] == ours["outputTokens"]
    else:  # the first line's partial count there, the response's final count here
        assert theirs["outputTokens"] <= ours["outputTokens"]


@pytest.mark.parametrize("name", list(HOMES))
def test_blocks_are_ccusages_blocks(name: str, corpus: Path, tmp_path: Path) -> None:
    home = corpus / "homes" / name
    theirs = [b for b in _ccusage("blocks", home / ".claude")["blocks"] if not b["isGap"]]
    ours = _ours("blocks", home, tmp_path / "ledger.db")["blocks"]
    assert [b["startTime"].replace(".000Z", "Z") for b in theirs] == [b["start"] for b in ours]
    assert [b["endTime"].replace(".000Z", "Z") for b in theirs] == [b["end"] for b in ours]
    for mine, block in zip(ours, theirs, strict=True):
        _compare(HOMES[name], block["tokenCounts"], mine)


@pytest.mark.parametrize("name", list(HOMES))
def test_days_are_ccusages_days(name: str, corpus: Path, tmp_path: Path) -> None:
    home = corpus / "homes" / name
    theirs = _ccusage("daily", home / ".claude")["daily"]
    ours = _ours("daily", home, tmp_path / "ledger.db")["rows"]
    assert [d["date"] for d in theirs] == [r["key"] for r in ours]
    for mine, day in _days(ours, theirs):
        _compare(HOMES[name], day, mine)


KEYS = {"inputTokens": "freshInputTokens", "cacheCreationTokens": "cacheWriteTokens",
        "cacheReadTokens": "cacheReadTokens", "outputTokens": "outputTokens"}  # fmt: skip


def _days(ours: list[dict], theirs: list[dict]) -> list[tuple[dict, dict]]:
    """The days side by side; a day whose input differs is taken with the next one, as a turn
    begun before midnight and answered after it counts whole on its first day here, and by each
    response's time in ccusage (docs/usage.md)."""
    pairs, at = [], 0
    while at < len(ours):
        mine, day = dict(ours[at]), dict(theirs[at])
        if mine["freshInputTokens"] != day["inputTokens"] and at + 1 < len(ours):
            at += 1
            for theirs_key, ours_key in KEYS.items():
                mine[ours_key] += ours[at][ours_key]
                day[theirs_key] += theirs[at][theirs_key]
        pairs.append((mine, day))
        at += 1
    return pairs
