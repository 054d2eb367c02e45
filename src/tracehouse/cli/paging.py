"""Long output through the user's pager when it goes to a terminal, as git does: `$PAGER`
(else `less`) with `LESS=FRX` unless the user set `LESS` (quit when it fits one screen, keep
colours, leave the screen as it was). Piped or redirected, output is written as it is."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys


def page(text: str) -> None:
    """`text` through the pager when standard output is a terminal and it is longer than the
    screen; else written out."""
    lines = shutil.get_terminal_size().lines
    if not sys.stdout.isatty() or text.count("\n") < lines - 1:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    command = shlex.split(os.environ.get("PAGER") or "less") or ["less"]
    env = {**os.environ, "LESS": os.environ.get("LESS", "FRX")}
    try:
        subprocess.run(command, input=text.encode("utf-8", "surrogateescape"), env=env,
                       check=False)  # fmt: skip
    except OSError:  # no such pager: the text as it is
        sys.stdout.write(text)
        sys.stdout.flush()
