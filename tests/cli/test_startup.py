"""A command imports its own module, not every command's: `sync backfill` from cron starts
without the exports, the gateway or the MCP server. `--help` still lists them all."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.conftest import REPO
from tracehouse.cli.app import COMMANDS

ENV = {**os.environ, "PYTHONPATH": str(REPO)}
OTHERS = ("export_cmd", "serve_cmd", "mcp_cmd", "resume_cmd", "usage_cmd", "doctor_cmd")


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    """`tracehouse ARGS`, reporting at exit which other commands' modules were imported."""
    script = (
        "import atexit, sys\n"
        f"others = [f'tracehouse.cli.{{m}}' for m in {OTHERS!r}]\n"
        "atexit.register(lambda: print('loaded:', [m for m in others if m in sys.modules],"
        " file=sys.stderr))\n"
        "from tracehouse.cli.app import main\n"
        f"sys.argv = ['tracehouse', *{list(args)!r}]\n"
        "main()\n"
    )
    return subprocess.run([sys.executable, "-c", script], env=ENV, capture_output=True, text=True)


def test_a_command_imports_only_its_own_module():
    done = _run("sync", "backfill", "--help")
    assert done.returncode == 0, done.stderr
    assert "--dry-run" in done.stdout
    assert "loaded: []" in done.stderr


def test_the_help_lists_every_command():
    done = _run("--help")
    assert done.returncode == 0, done.stderr
    for name in COMMANDS:
        assert f" {name} " in done.stdout, name
    assert "loaded: []" not in done.stderr
