"""Every session of every fixture home, written by `tracehouse resume` as a new Claude Code
session and as a new Codex rollout: the project's own parsers read every written file with no
reject, each as a continuation of the session it came from, holding its prompts and answers in
order (a property over the whole fixture ledger, not a sample)."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.resume.shapes import lacking, said
from tracehouse.cli.app import app
from tracehouse.resume.conversation import conversation
from tracehouse.resume.plan import carry_out, plan
from tracehouse.store import open_store

pytestmark = pytest.mark.corpus

runner = CliRunner()


@pytest.mark.parametrize("target", ["claude-code", "codex"])
def test_every_fixture_session_resumes_in_another_agent_and_reads_back(
    target: str, all_homes_ledger: Path, tmp_path: Path
) -> None:
    ledger = tmp_path / "ledger.db"
    with sqlite3.connect(all_homes_ledger) as source, sqlite3.connect(ledger) as copy:
        source.backup(copy)
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (home / ".codex").mkdir()
    env = {"HOME": str(home)} | {k: v for k, v in os.environ.items() if k == "PATH"}
    store = open_store(ledger, create=False)
    originals: dict[str, list[tuple[str, str]]] = {}
    try:
        others = "SELECT label FROM sessions WHERE source_provider != ? ORDER BY label"
        labels = [r["label"] for r in store.query(others, [target])]
        for label in labels:
            chosen = plan(store, label, target=target, cwd="/srv/work", home=home, env=env)
            assert chosen.action == "new", (label, chosen.action)
            carry_out(chosen)
            originals[label] = said(conversation(store, label))
    finally:
        store.close()
    assert len(originals) > 100  # all six sources but the target's own

    back = tmp_path / "back.db"
    result = runner.invoke(app, ["sync", "backfill", "--home", str(home), "--store", str(back),
                                 "--json"])  # fmt: skip
    report = json.loads(result.output)
    assert report["rejects"] == [] and report["failures"] == []
    written = open_store(back, create=False)
    try:
        rows = written.query("SELECT label, metadata FROM sessions WHERE NOT is_subagent")
        from_label = {json.loads(r["metadata"])["continued_from"]["label"]: r["label"]
                      for r in rows}  # fmt: skip
        assert set(from_label) == set(originals)
        missing = {label: lacking(wanted, said(conversation(written, from_label[label])))
                   for label, wanted in originals.items()}  # fmt: skip
    finally:
        written.close()
    assert not {label: gone for label, gone in missing.items() if gone}
