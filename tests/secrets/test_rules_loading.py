"""The secret-scanning rules load on a thread of their own while a run plans, once a unit has
work, and never in a run with nothing new; no thread outlives the load, so parsers still fork."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

from tests.conftest import DATA
from tracehouse.pipeline.sync import SyncOptions, sync
from tracehouse.redaction.detect import Detector
from tracehouse.redaction.redactor import Redactor
from tracehouse.sinks.sqlite.store import SqliteStore


def _loading_threads() -> list[threading.Thread]:
    """The rules' loading threads alive (other tests may leave threads of their own)."""
    return [t for t in threading.enumerate() if t.name == "secret-rules"]


def _options(home: Path, redactor: Redactor) -> SyncOptions:
    return SyncOptions(sources={"claude-code": [home / ".claude"]}, workers=1, redactor=redactor)


def test_a_run_with_work_loads_the_rules_beside_its_plan(tmp_path: Path, monkeypatch) -> None:
    home = tmp_path / "home"
    shutil.copytree(DATA / "claude" / "home", home, symlinks=True)
    store = SqliteStore(tmp_path / "ledger.db")
    started: list[str] = []
    real = Detector.load_in_background

    def noting(self: Detector) -> None:
        started.append(threading.current_thread().name)
        real(self)

    monkeypatch.setattr(Detector, "load_in_background", noting)
    try:
        first = Redactor(b"k" * 32, Detector())
        assert sync(store, _options(home, first)).ok
        assert started == ["MainThread"]  # once, however many units have work
        assert first.detector._scanner is not None and first.detector._loading is None
        assert not _loading_threads()

        again = Redactor(b"k" * 32, Detector())
        assert sync(store, _options(home, again)).ok  # nothing new
        assert started == ["MainThread"] and again.detector._scanner is None
    finally:
        store.close()


def test_settle_waits_for_the_load_and_leaves_no_thread(tmp_path: Path) -> None:
    detector = Detector(cache_dir=str(tmp_path / "rules"))
    detector.load_in_background()
    detector.load_in_background()  # one load, not two
    assert len(_loading_threads()) <= 1
    detector.settle()
    assert not _loading_threads()
    assert detector.scan(b"password = 'hunter2-but-longer-9f3k2'")
