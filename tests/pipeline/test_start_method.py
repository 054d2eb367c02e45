"""How parser processes start (`tracehouse.processes.start_method`): forked, sharing the
writer's loaded rules, from a process that runs no other thread on Linux; spawned from any
other. A backfill through the CLI — forked there — stores what an inline run stores."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import REPO
from tests.pipeline.helpers import backfill, make_home, snapshot
from tracehouse.store.sqlite.store import SqliteStore

# Without a BLAS thread count of the user's: the command line sets its own (`one_blas_thread`).
ENV = {**{k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"},
       "PYTHONPATH": str(REPO)}  # fmt: skip
LINUX = pytest.mark.skipif(sys.platform != "linux", reason="fork is chosen only on Linux")


def _chosen(before: str) -> str:
    """The start method a fresh interpreter chooses after running `before`."""
    script = f"{before}\nfrom tracehouse.processes import start_method\nprint(start_method())"
    done = subprocess.run([sys.executable, "-c", script], env=ENV, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


@LINUX
def test_a_process_with_no_other_thread_forks_its_parsers():
    assert _chosen("import tracehouse.cli.app") == "fork"


@LINUX
def test_the_rules_prefetched_by_the_command_line_are_waited_for_before_the_fork():
    prefetched = (
        "from tracehouse.redaction.detect import prefetch, settle_prefetched\n"
        "prefetch()\n"
        "settle_prefetched()  # as run_in_workers does"
    )
    assert _chosen(prefetched) == "fork"


@LINUX
def test_a_process_running_another_thread_spawns_them():
    threaded = (
        "import threading, time\n"
        "threading.Thread(target=time.sleep, args=(5,), daemon=True).start()"
    )
    assert _chosen(threaded) == "spawn"


@LINUX
def test_a_new_ledger_opened_by_the_command_line_leaves_it_forking(tmp_path):
    """A new ledger's migrations import sqlite-utils, which imports numpy where it is installed;
    numpy's OpenBLAS would start a thread per core as it loads, and every first backfill
    spawned its parsers."""
    opened = (
        "import sys\n"
        "from tracehouse.cli.app import main\n"
        f"sys.argv = ['tracehouse', 'store', 'init', '--store', {str(tmp_path / 'new.db')!r}]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "assert 'numpy' in sys.modules and 'sqlite_utils' in sys.modules"
    )
    assert _chosen(opened) == "fork"


@LINUX
def test_a_thread_started_by_native_code_counts_too():
    """polars' pool is not in `threading.enumerate()`; the kernel's list of threads holds it."""
    pooled = "import polars as pl\npl.DataFrame({'a': list(range(100_000))}).sort('a')"
    assert _chosen(pooled) == "spawn"


def test_a_backfill_with_forked_parsers_stores_what_an_inline_one_does(tmp_path):
    home = make_home(tmp_path, copies=3)
    inline = SqliteStore(tmp_path / "inline.db")
    try:
        backfill(inline, home, workers=1)
        expected = snapshot(inline)
    finally:
        inline.close()
    ledger = tmp_path / "forked.db"
    env = {**ENV, "TRACEHOUSE_WORKERS": "3", "TRACEHOUSE_WORKERS_MIN_BYTES": "0"}
    command = ["-c", "from tracehouse.cli.app import main; main()", "sync", "backfill"]
    where = ["--home", str(home), "--store", str(ledger), "-q"]
    subprocess.run([sys.executable, *command, *where], env=env, check=True)
    forked = SqliteStore(ledger)
    try:
        assert snapshot(forked) == expected
    finally:
        forked.close()
