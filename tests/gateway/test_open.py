"""`tracehouse open`: the local web view behind a one-time link, and long output through the
user's pager as git does."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from tests.pipeline.helpers import synced_ledger
from tracehouse.cli.app import app
from tracehouse.gateway.app import GatewayConfig, create_app
from tracehouse.gateway.local_view import LocalAccess, local_path, opener_file

runner = CliRunner()


@pytest.fixture
def ledger(tmp_path: Path) -> Path:
    return synced_ledger(tmp_path)


def test_the_one_time_code_signs_in_once(ledger: Path) -> None:
    access = LocalAccess()
    with TestClient(create_app(GatewayConfig(str(ledger), local_access=access))) as client:
        assert client.get("/", follow_redirects=False).status_code == 303  # not signed in
        assert client.get("/login/once", params={"code": "guess"}).status_code == 403
        first = client.get("/login/once", params={"code": access.code, "next": "//evil.example"})
        assert first.status_code == 200 and 'url=/"' in first.text  # only a path of the view
        assert client.get("/").status_code == 200  # the cookie it set
        again = client.get("/login/once", params={"code": access.code})
        assert again.status_code == 403 and "used already" in again.text
        read = {"Authorization": f"Bearer {access.token}"}
        assert client.get("/v1/sessions", headers=read).status_code == 200
        pushed = client.post("/v1/sessions.import", content=b"{}", headers=read)
        assert pushed.status_code == 403  # a read grant, nothing more


def test_the_link_goes_through_a_file_only_its_owner_reads(tmp_path: Path) -> None:
    access = LocalAccess()
    link = access.link("http://127.0.0.1:1", "/s/cc-1")
    page = opener_file(tmp_path, link)
    assert page.stat().st_mode & 0o777 == 0o600
    assert access.code in page.read_text()
    assert [local_path(p) for p in ("/s/x", "//h", "http://h", "\\\\h", "x")] == [
        "/s/x", "/", "/", "/", "/"]  # fmt: skip


def test_open_serves_the_ledger_on_localhost_until_stopped(ledger: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRACEHOUSE_")}
    command = [sys.executable, "-m", "tracehouse.cli.app", "open", "last", "--no-browser",
               "--store", str(ledger)]  # fmt: skip
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert process.stderr is not None
        said = ""
        deadline = time.monotonic() + 60
        while "Ctrl-C" not in said and time.monotonic() < deadline:
            said += process.stderr.readline()
        link = re.search(r"http://127\.0\.0\.1:\d+/login/once\S+", said)
        assert link, said
        for _ in range(100):  # the server starts after it prints its link
            try:
                answer = httpx.get(link.group(0))
                break
            except httpx.ConnectError:
                time.sleep(0.1)
        assert answer.status_code == 200 and "/s/cc-" in answer.text  # `last`: that session
        base = link.group(0).split("/login")[0]
        page = httpx.get(base + "/", cookies=answer.cookies)
        assert page.status_code == 200 and "sessions" in page.text
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_open_says_what_it_cannot_open(ledger: Path) -> None:
    missing = runner.invoke(app, ["open", "zz-nothing", "--no-browser", "--store", str(ledger)])
    assert missing.exit_code != 0 and "zz-nothing" in missing.stderr
    gateway = runner.invoke(app, ["open", "--no-browser", "--store", "https://gw.example"])
    assert gateway.exit_code != 0 and "is a gateway" in gateway.stderr


def _in_a_terminal(argv: list[str], env: dict[str, str]) -> str:
    """What `argv` writes to a terminal of 10 lines (a pseudo-terminal)."""
    pid, fd = pty.fork()
    if pid == 0:
        os.execve(sys.executable, [sys.executable, *argv], env)
    out = b""
    while True:
        ready, _, _ = select.select([fd], [], [], 60)
        if not ready:
            break
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    os.waitpid(pid, 0)
    return out.decode("utf-8", "replace")


def test_a_long_transcript_goes_through_the_pager_in_a_terminal(
    ledger: Path, tmp_path: Path
) -> None:
    paged = tmp_path / "paged.txt"
    env: dict[str, Any] = {k: v for k, v in os.environ.items() if not k.startswith("TRACEHOUSE_")}
    env.update(PAGER=f"sh -c 'cat > {paged}'", LINES="10", COLUMNS="100")
    shown = _in_a_terminal(["-m", "tracehouse.cli.app", "sessions", "show", "last", "--store",
                            str(ledger)], env)  # fmt: skip
    assert "session " in paged.read_text() and "session " not in shown
    piped = runner.invoke(app, ["sessions", "show", "last", "--store", str(ledger)])
    assert "session " in piped.stdout  # not a terminal: written as it is
