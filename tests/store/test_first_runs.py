"""Two first runs on a new SQLite ledger, started together (cron and a `sync live` unit at boot):
one creates the schema, the other waits for it and finds nothing left to apply (issue #40).
Before, one of them exited with "not a tracehouse ledger (database is locked)" or a UNIQUE
constraint failure in about a third of such starts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

OPEN = (
    "import sys\n"
    "from tracehouse.store import open_store\n"
    "store = open_store(sys.argv[1])\n"
    "print(store.schema_version)\n"
    "store.close()\n"
)


@pytest.mark.slow
def test_first_runs_started_together_all_open_the_ledger(tmp_path: Path) -> None:
    for attempt in range(10):
        ledger = tmp_path / f"attempt{attempt}" / "ledger.db"  # its directory is new too
        runs = [
            subprocess.Popen(
                [sys.executable, "-c", OPEN, str(ledger)],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(3)
        ]
        outputs = [run.communicate(timeout=60) for run in runs]
        assert [run.returncode for run in runs] == [0, 0, 0], [err for _, err in outputs]
        assert len({out for out, _ in outputs}) == 1  # the same schema version for each
