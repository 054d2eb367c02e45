"""`tracehouse browse` in a real terminal: tmux runs it at 80×24, keys are sent as a person
types them, and the screen is read back (start, search, open a session, resume, quit)."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.pipeline.helpers import synced_ledger

TMUX = shutil.which("tmux")
pytestmark = pytest.mark.skipif(
    TMUX is None, reason="no tmux on PATH (Debian: apt-get install tmux)"
)


def _tmux(*args: str, socket: Path) -> str:
    done = subprocess.run([str(TMUX), "-S", str(socket), *args], capture_output=True, text=True,
                          timeout=30, check=True)  # fmt: skip
    return done.stdout


def _until(screen: Callable[[], str], wanted: str, seconds: float = 30) -> str:
    deadline = time.monotonic() + seconds
    shown = ""
    while time.monotonic() < deadline:
        shown = screen()
        if wanted in shown:
            return shown
        time.sleep(0.2)
    raise AssertionError(f"{wanted!r} never on the screen:\n{shown}")


def test_browse_in_a_real_terminal(tmp_path: Path) -> None:
    ledger = synced_ledger(tmp_path)
    socket = tmp_path / "tmux.sock"
    env = {
        "PYTHONPATH": os.pathsep.join(sys.path),
        "TERM": "xterm-256color",
        "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
    }
    argv = ["env", *(f"{k}={v}" for k, v in env.items()), sys.executable, "-m",
            "tracehouse.cli.app", "browse", "--store", str(ledger)]  # fmt: skip
    command = shlex.join(argv)
    _tmux("new-session", "-d", "-x", "80", "-y", "24", "-s", "browse", command, socket=socket)
    try:

        def screen() -> str:
            return _tmux("capture-pane", "-p", "-t", "browse", socket=socket)

        _until(screen, "cc-")  # the list
        # `/` to the search box, tried until a key no binding takes shows there: a key sent
        # while the app still starts on a loaded machine is not seen (and the query's letters
        # typed into the list would be keys: `r`, `o`)
        for _ in range(20):
            _tmux("send-keys", "-t", "browse", "/", socket=socket)
            _tmux("send-keys", "-t", "browse", "-l", "Z", socket=socket)
            try:
                _until(lambda: screen().splitlines()[1], "Z", seconds=1)  # the search box's line
                break
            except AssertionError:
                _tmux("send-keys", "-t", "browse", "Escape", socket=socket)
                # alone: an escape with the next key just behind it reads as alt+that key
                time.sleep(0.5)
        _tmux("send-keys", "-t", "browse", "-l", "eroDivisionError", socket=socket)
        _until(screen, "ZeroDivisionError")
        _tmux("send-keys", "-t", "browse", "Enter", socket=socket)
        _tmux("send-keys", "-t", "browse", "r", socket=socket)
        _until(screen, "tracehouse resume")
        _tmux("send-keys", "-t", "browse", "q", socket=socket)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            alive = subprocess.run([str(TMUX), "-S", str(socket), "has-session", "-t", "browse"],
                                   capture_output=True, check=False)  # fmt: skip
            if alive.returncode != 0:
                break
            time.sleep(0.2)
        else:
            raise AssertionError("browse did not quit on `q`")
    finally:
        subprocess.run([str(TMUX), "-S", str(socket), "kill-server"], capture_output=True,
                       check=False)  # fmt: skip
