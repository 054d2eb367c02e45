"""Checkpoints beside the writer: the WAL copied into the ledger by a thread of its own.

A commit that finds the WAL past `wal_autocheckpoint` pages copies it into the database file and
syncs it before the commit returns: a backfill's writer spent 0.8 s of every 5 s there, while
the parsers waited for it. During a group import the writer turns that off and this thread,
woken after each commit, runs a PASSIVE checkpoint through a connection of its own. SQLite lets
a checkpoint run while another connection writes (it copies the frames committed before it
began), and Python's sqlite3 lets go of the GIL while it does, so the copying runs on another
core. The WAL is reset by the writer's next transaction once a checkpoint has caught up, so it
stays near a group's size; a checkpoint is never unsafe, and one left undone is done by the next
connection that closes the ledger.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
from collections.abc import MutableMapping
from pathlib import Path


class Checkpointer:
    def __init__(
        self, path: Path, busy_timeout_ms: int, timings: MutableMapping[str, float]
    ) -> None:
        self._path = path
        self._busy_timeout_ms = busy_timeout_ms
        self._timings = timings  # the store's: "checkpoint" seconds, for a run's phases
        self._wake = threading.Event()
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="ledger-checkpoint", daemon=True)
        self._thread.start()

    def committed(self) -> None:
        """Called after each commit: checkpoint what it wrote, soon, in the background."""
        self._wake.set()

    def close(self) -> None:
        """Finish the checkpoint under way (if any) and stop."""
        self._stopping = True
        self._wake.set()
        self._thread.join()

    def _run(self) -> None:
        conn = sqlite3.connect(self._path, isolation_level=None)  # this thread's own
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(self._busy_timeout_ms)}")
            while True:
                self._wake.wait()
                self._wake.clear()
                if self._stopping:
                    return
                began = time.perf_counter()
                # Busy or interrupted: the next commit wakes it again, and a close does it.
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
                self._timings["checkpoint"] += time.perf_counter() - began
        finally:
            conn.close()
