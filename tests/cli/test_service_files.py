"""The service files in config/examples run as written where uv is installed the documented way."""

from __future__ import annotations

import os
import plistlib
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO

EXAMPLES = REPO / "config" / "examples"


def unit_lines() -> dict[str, str]:
    found = {}
    for line in (EXAMPLES / "tracehouse-live.service").read_text().splitlines():
        key, sep, value = line.partition("=")
        if sep and not line.startswith("#"):
            found.setdefault(key.strip(), value.strip())
    return found


@pytest.mark.parametrize("name", ["tracehouse-live.service", "tracehouse-gateway.service"])
def test_the_systemd_unit_verifies(tmp_path: Path, name: str) -> None:
    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze is not installed (Debian: apt-get install systemd)")
    unit = tmp_path / name
    text = (EXAMPLES / name).read_text()
    # verify wants the program to exist: the gateway's is the checkout's own environment
    program = REPO / ".venv" / "bin" / "tracehouse"
    unit.write_text(text.replace("/opt/tracehouse/.venv/bin/tracehouse", str(program)))
    result = subprocess.run(
        ["systemd-analyze", "verify", "--man=no", str(unit)],
        capture_output=True,
        text=True,
        env={**os.environ, "SYSTEMD_LOG_LEVEL": "warning"},
    )
    assert result.returncode == 0, result.stderr
    assert name not in result.stderr, result.stderr


def test_the_gateway_unit_serves_the_ledger_it_is_given() -> None:
    lines = {}
    for line in (EXAMPLES / "tracehouse-gateway.service").read_text().splitlines():
        key, sep, value = line.partition("=")
        if sep and not line.startswith("#"):
            lines.setdefault(key.strip(), value.strip())
    command = lines["ExecStart"].split()
    assert command[:2] == ["/opt/tracehouse/.venv/bin/tracehouse", "serve"]
    assert "--store" not in command  # TRACEHOUSE_STORE, from the EnvironmentFile, names it
    assert lines["EnvironmentFile"] == "/etc/tracehouse/gateway.env"


def test_the_unit_finds_uv_where_its_installer_puts_it(tmp_path: Path) -> None:
    """systemd's PATH has no ~/.local/bin: the unit must name it (`env uv` exited 127)."""
    lines = unit_lines()
    assert lines["ExecStart"].startswith("/usr/bin/env uv ")
    path = lines["Environment"].removeprefix("PATH=").replace("%h", str(tmp_path))
    uv = tmp_path / ".local" / "bin" / "uv"
    uv.parent.mkdir(parents=True)
    uv.write_text("#!/bin/sh\n")
    uv.chmod(0o755)
    assert shutil.which("uv", path=path) == str(uv)


def test_the_launchd_plist_parses_and_runs_live() -> None:
    with (EXAMPLES / "com.tracehouse.live.plist").open("rb") as f:
        plist = plistlib.load(f)
    assert plist["Label"] == "com.tracehouse.live"
    assert plist["ProgramArguments"][0].endswith("/uv")
    assert plist["ProgramArguments"][1:] == ["run", "--frozen", "tracehouse", "sync", "live", "-q"]
