"""`secrets scan --home`: what a sync of a home would redact, before anything is imported
(issue #63). Every source's logs with secrets planted in them; the preview names each kind
planted, masks every value, reads the home without changing a byte of it, and leaves no ledger
behind."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from typer.testing import CliRunner

from tests.redaction.plant_home import planted_home
from tracehouse.cli.app import app

runner = CliRunner()


def _digest(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_a_home_is_previewed_without_storing_or_touching_anything(tmp_path: Path) -> None:
    home, planted = planted_home(tmp_path)
    before = _digest(home)
    ledger = tmp_path / "never.db"
    done = runner.invoke(
        app, ["secrets", "scan", "--home", str(home), "--json", "--store", str(ledger)]
    )
    assert done.exit_code == 1, done.output  # found: a scanner's exit code says so (#70)
    found = json.loads(done.stdout)
    assert len(found) >= len(planted) // 2  # the plants that reach a stored text
    assert {f["kind"] for f in found} >= {"github-pat", "assigned-secret", "private-key"}
    for f in found:  # a session's row, or a cursor's state or a reject's excerpt
        assert (f["session"] is not None) == (f["table"] not in ("watermarks", "rejects"))
        assert f["preview"].endswith("chars)")
    shown = done.stdout
    assert not any(p.value in shown for p in planted)
    assert _digest(home) == before
    assert not ledger.exists()


def test_exit_zero_reports_only(tmp_path: Path) -> None:
    home, _ = planted_home(tmp_path)
    done = runner.invoke(app, ["secrets", "scan", "--home", str(home), "--exit-zero", "--limit",
                               "1", "--store", str(tmp_path / "never.db")])  # fmt: skip
    assert done.exit_code == 0 and "secrets in those logs" in done.output
