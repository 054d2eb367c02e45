"""A command imports its own module, not every command's: `sync backfill` from cron starts
without the exports, the gateway or the MCP server. `--help` still lists them all."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys

from tests.conftest import DATA, REPO
from tests.pipeline.helpers import main_file, make_home
from tests.sources.cursor_dbs import make_user_dir
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


def test_the_help_loads_no_parser():
    """Every command's module is loaded to list them, but none of them loads the sources: the
    pipeline and its parsers load when `sync` or `doctor` runs."""
    script = (
        "import atexit, sys\n"
        "atexit.register(lambda: print('parsers:', 'tracehouse.parsers.registry' in sys.modules,"
        " file=sys.stderr))\n"
        "from tracehouse.cli.app import main\n"
        "sys.argv = ['tracehouse', '--help']\n"
        "main()\n"
    )
    done = subprocess.run([sys.executable, "-c", script], env=ENV, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "parsers: False" in done.stderr


def _readers_loaded(*args: str) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """`tracehouse ARGS`, and which parsers' reading side (`<package>.reader`) it imported;
    sqlite-utils, which applies a ledger's pending migrations, is listed when it was loaded."""
    script = (
        "import atexit, sys\n"
        "atexit.register(lambda: print('readers:', sorted(m for m in sys.modules"
        " if m == 'sqlite_utils'"
        " or m.startswith('tracehouse.parsers.') and m.endswith('.reader')), file=sys.stderr))\n"
        "from tracehouse.cli.app import main\n"
        f"sys.argv = ['tracehouse', *{list(args)!r}]\n"
        "main()\n"
    )
    done = subprocess.run([sys.executable, "-c", script], env=ENV, capture_output=True, text=True)
    line = next(x for x in done.stderr.splitlines() if x.startswith("readers: "))
    return done, ast.literal_eval(line.removeprefix("readers: "))


def test_a_sync_with_nothing_new_imports_no_reader(tmp_path):
    """A cron run that finds nothing new plans from discovery alone; one that finds something
    imports only the reading side of the sources that changed (`parsers/base.reading_side`).
    Only a new ledger's first run loads sqlite-utils, to apply its migrations."""
    home = make_home(tmp_path)
    ledger = str(tmp_path / "ledger.db")
    sync = ("sync", "backfill", "--home", str(home), "--store", ledger, "-q")
    first, readers = _readers_loaded(*sync)
    assert first.returncode == 0, first.stderr
    assert readers == ["sqlite_utils", "tracehouse.parsers.claude_code.reader"]
    again, readers = _readers_loaded(*sync)
    assert again.returncode == 0, again.stderr
    assert readers == []
    with main_file(home).open("ab") as f:  # one more line: Claude Code's reader, no other
        f.write(main_file(home).read_bytes().splitlines(keepends=True)[-1])
    appended, readers = _readers_loaded(*sync)
    assert appended.returncode == 0, appended.stderr
    assert readers == ["tracehouse.parsers.claude_code.reader"]


def test_sources_that_plan_from_several_files_plan_without_their_reader(tmp_path):
    """Cursor, the Cursor agent and OpenCode decide from several stats whether a unit changed
    (`plan_unit`): that is discovery's work too, and a run with nothing new reads no unit."""
    home = tmp_path / "home"
    shutil.copytree(DATA / "cursor_agent" / "home", home)
    shutil.copytree(DATA / "opencode" / "home", home, dirs_exist_ok=True)
    make_user_dir(home)
    ledger = str(tmp_path / "ledger.db")
    sync = ("sync", "backfill", "--home", str(home), "--store", ledger, "-q")
    first, readers = _readers_loaded(*sync)
    assert first.returncode == 0, first.stderr
    assert readers == [
        "sqlite_utils",
        *(f"tracehouse.parsers.{name}.reader" for name in ("cursor", "cursor_agent", "opencode")),
    ]
    again, readers = _readers_loaded(*sync)
    assert again.returncode == 0, again.stderr
    assert readers == []


def test_startup_leaves_tenacity_for_the_first_retry():
    """`retrying` builds tenacity's loop only once a call fails with a reason to retry."""
    code = "import sys, tracehouse.cli.sync_cmds; print('tenacity' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], env=ENV, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
