"""Private scratch space: where a run keeps copies of what it reads (Cursor's databases).

A copy of a `state.vscdb` holds everything Cursor stores, auth tokens included, so it lives in a
directory only its owner can enter (0700), as files only its owner can read (0600), named with
the pid of the process that made it. A process killed before it could clean up (SIGKILL, the
OOM killer) leaves its directory behind; every run removes those of processes that are gone, so
a crash loop cannot fill a RAM-backed /tmp with copies of a multi-GB database.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress

PREFIX = "tracehouse-scratch-"
# Names written by earlier releases: with a pid (live), or without one (a backfill's copy).
_OLD_WITH_PID = "tracehouse-live-"
_OLD_WITHOUT_PID = "tracehouse-vscdb-"
_OLD_AGE_SECONDS = 24 * 3600  # no pid to ask: gone when surely no run still reads it


@contextmanager
def private_dir(tmp: str | None = None) -> Iterator[str]:
    """A fresh 0700 directory under `tmp` (the system's by default), removed on exit."""
    path = tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=tmp)  # mkdtemp: mode 0700
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def make_private_dirs(path: str) -> None:
    os.makedirs(path, mode=0o700, exist_ok=True)
    os.chmod(path, 0o700)  # makedirs leaves an existing directory's mode as it was


def copy_private(source: str, target: str) -> None:
    """Copy a file's bytes to a new file only the owner can read (never through a laxer mode)."""
    with suppress(FileNotFoundError):
        os.unlink(target)
    with open(source, "rb") as src:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)


def write_private(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)


def leftovers(tmp: str | None = None) -> list[str]:
    """Scratch directories under `tmp` whose process is gone."""
    tmp = tmp or tempfile.gettempdir()
    found = []
    try:
        entries = list(os.scandir(tmp))
    except OSError:
        return []
    now = time.time()
    for entry in entries:
        name = entry.name
        for prefix in (PREFIX, _OLD_WITH_PID):
            if name.startswith(prefix):
                pid = name[len(prefix) :].split("-", 1)[0]
                if pid.isdigit() and not _running(int(pid)):
                    found.append(entry.path)
        if name.startswith(_OLD_WITHOUT_PID):
            with suppress(OSError):
                if now - entry.stat(follow_symlinks=False).st_mtime > _OLD_AGE_SECONDS:
                    found.append(entry.path)
    return found


def remove_leftovers(tmp: str | None = None) -> list[str]:
    """Remove what `leftovers` finds; returns what was removed."""
    removed = []
    for path in leftovers(tmp):
        shutil.rmtree(path, ignore_errors=True)
        if not os.path.exists(path):
            removed.append(path)
    return removed


def _running(pid: int) -> bool:
    if os.name != "posix":
        return True  # os.kill is no probe on Windows: never judge a directory orphaned there
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process: not ours to judge
    return not _zombie(pid)


def _zombie(pid: int) -> bool:
    """A killed process not reaped yet still answers kill(0); on Linux /proc says it is dead."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 : stat.rfind(b")") + 3] == b"Z"
