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


def _until(screen: Callable[[], str], wanted: str, seconds: float = 30, absent: str = "") -> str:
    """What `screen()` shows once it holds `wanted` (and not `absent`)."""
    deadline = time.monotonic() + seconds
    shown = ""
    while time.monotonic() < deadline:
        shown = screen()
        if wanted in shown and not (absent and absent in shown):
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
        "BROWSER": "true",  # a stray `o` opens no browser
    }
    argv = ["env", *(f"{k}={v}" for k, v in env.items()), sys.executable, "-m",
            "tracehouse.cli.app", "browse", "--store", str(ledger)]  # fmt: skip
    command = shlex.join(argv)
    # in a folder of its own: a stray `e` writes its export there
    _tmux("new-session", "-d", "-x", "80", "-y", "24", "-s", "browse", "-c", str(tmp_path),
          command, socket=socket)  # fmt: skip
    try:

        def screen() -> str:
            return _tmux("capture-pane", "-p", "-t", "browse", socket=socket)

        _until(screen, "cc-")  # the list

        def footer() -> str:  # the keys the focused widget leaves to the app: `Family` in the list
            return screen().rstrip().splitlines()[-1]

        def press_until(key: str, seen: Callable[[], bool], tries: int = 30) -> None:
            """`key` sent until `seen()`: a key sent while the app still starts is not seen, and
            one typed just after a key that moves the focus may reach the widget that had it."""
            for _ in range(tries):
                _tmux("send-keys", "-t", "browse", key, socket=socket)
                deadline = time.monotonic() + 1.5
                while time.monotonic() < deadline:
                    if seen():
                        return
                    time.sleep(0.2)
            raise AssertionError(f"{key!r} was never answered:\n{screen()}")

        press_until("y", lambda: "copied cc-" in screen())  # the app answers keys
        _until(footer, "Family")  # the list has the focus
        for _ in range(10):  # the query typed into the search box, what was there first cleared
            press_until("/", lambda: "Family" not in footer())
            _tmux("send-keys", "-t", "browse", "C-u", socket=socket)
            _tmux("send-keys", "-t", "browse", "-l", "ZeroDivisionError", socket=socket)
            try:
                _until(screen, "  ZeroDivisionError  ", seconds=5)
                break
            except AssertionError:
                continue
        _until(screen, "tool")  # its hits
        _tmux("send-keys", "-t", "browse", "Enter", socket=socket)
        _until(footer, "Resume")  # back in the list
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
