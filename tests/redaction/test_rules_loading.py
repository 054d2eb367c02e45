"""The secret-scanning rules load on a thread of their own while a run plans, once a unit has
work, and never in a run with nothing new; `tracehouse sync` starts the load at its first step
(`prefetch`), and a run's detector waits for that load instead of starting its own; no thread
outlives the load, so parsers still fork."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.conftest import DATA, REPO
from tracehouse.pipeline.options import SyncOptions
from tracehouse.pipeline.sync import sync
from tracehouse.redaction import detect
from tracehouse.redaction.detect import Detector
from tracehouse.redaction.redactor import Redactor
from tracehouse.store.sqlite.store import SqliteStore


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


@pytest.mark.slow
def test_settle_waits_for_the_load_and_leaves_no_thread(tmp_path: Path) -> None:
    detector = Detector(cache_dir=str(tmp_path / "rules"))
    detector.load_in_background()
    detector.load_in_background()  # one load, not two
    assert len(_loading_threads()) <= 1
    detector.settle()
    assert not _loading_threads()
    assert detector.scan(b"password = 'hunter2-but-longer-9f3k2'")


def test_a_detector_waits_for_the_prefetched_load_instead_of_loading_again():
    Detector().warm()  # the user's cache holds the compiled rules
    detect.prefetch()  # the rules of the user's cache, as the command line loads them
    detect.prefetch()  # one load, not two
    detector = Detector()
    detector.load_in_background()  # the prefetched load is this one's
    assert len(_loading_threads()) <= 1
    assert detector._loading is None or detector._loading.daemon
    detector.settle()
    assert not _loading_threads() and not detect._PREFETCHED
    assert detector.scan(b"password = 'hunter2-but-longer-9f3k2'")


def test_rules_never_compiled_are_not_prefetched(tmp_path: Path):
    detect.prefetch(str(tmp_path / "rules"))  # compiling is left to a run that scans
    detect.prefetch(str(tmp_path))  # an empty directory
    assert not detect._PREFETCHED and not _loading_threads()


def test_settle_prefetched_leaves_no_thread():
    Detector().warm()
    detect.prefetch()
    detect.settle_prefetched()
    assert not _loading_threads() and not detect._PREFETCHED


@pytest.mark.parametrize(("command", "prefetched"), [("sync", True), ("search", False)])
def test_the_command_line_prefetches_the_rules_for_sync_alone(command: str, prefetched: bool):
    Detector().warm()  # compiled into the user's cache, which the command line loads from
    script = (
        "import sys\n"
        f"sys.argv = ['tracehouse', {command!r}, '--help']\n"
        "from tracehouse.cli.app import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "from tracehouse.redaction import detect\n"
        "print('PREFETCHED', bool(detect._PREFETCHED))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert f"PREFETCHED {prefetched}" in done.stdout
