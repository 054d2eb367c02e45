"""What the suite knows of an agent: where its registry (npm or PyPI) put it, how it is pointed
at the scripted model in a throwaway home, how it is run once and resumed, and its own names
for the scenario's steps (a shell command, a file write, a file read).

Every agent runs offline: its model is the scripted one on 127.0.0.1, and any other address
goes to a proxy on a closed local port. Nothing is written outside the throwaway home.
"""

from __future__ import annotations

import json
import os
import platform
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from conformance.servers.base import Call, Dialect

NOTES = "notes.txt"
NOTE_TEXT = "conformance notes: the ledger equals what the agent did\n"
MARKER = "conformance-shell-ok"
MISSING = "ls /conformance-missing-path"  # a command that fails: exit status 2

_CLOSED = "http://127.0.0.1:9"  # nothing listens: any address but the model's fails at once


def platform_name() -> str:
    machine = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64"}.get(
        platform.machine().lower(), platform.machine().lower()
    )
    return f"{platform.system().lower()}-{machine}"


def base_env(home: Path) -> dict[str, str]:
    return {
        "HOME": str(home),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "NO_COLOR": "1",
        "HTTPS_PROXY": _CLOSED,
        "HTTP_PROXY": _CLOSED,
        "NO_PROXY": "127.0.0.1,localhost",
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
    }


@dataclass(frozen=True)
class Agent:
    """One agent CLI as the suite drives it."""

    name: str  # tracehouse's source name
    package: str  # the npm or PyPI package a release is published as
    dialect: Callable[[], Dialect]
    prefix: str  # what the agent puts before the API's paths
    model: str
    binary: Callable[[Path], Path]  # where it is installed (node_modules, its venv) → program
    setup: Callable[[Path, str], dict[str, str]]  # (home, model url) → environment
    first: Callable[[Path, str], list[str]]  # (program, prompt) → argv
    resume: Callable[[Path, str, str], list[str]]  # (program, session id, prompt) → argv
    session_id: Callable[[Path, str], str]  # (home, first run's stdout) → the session's id
    steps: Callable[[Path], tuple[Call | None, ...]]  # work dir → the scenario's calls
    pinned_as: str = ""  # the package npm/package.json pins, where not `package` itself
    # whether a session can be resumed headless; where not, each prompt is a session of its own
    resumes: bool = True
    registry: str = "npm"  # or "pypi": installed into a venv of its own (conformance/install.py)
    python: str = ""  # the Python (X.Y) a PyPI agent runs on
    # whether its session log names the model; where not, the ledger's model must be NULL
    logs_model: bool = True
    # an agent that edits by what its answer says, not by tool calls (scenario.py)
    written: Callable[[Call], str] | None = None
    # an agent that logs its token counts rounded: how it rounds one
    rounds: Callable[[int], int] | None = None
    # the counts its log never holds, which the ledger must keep NULL ("not recorded")
    unlogged: frozenset[str] = frozenset()
    # what its log calls the model, where not what the API was sent
    logged_model: str = ""
    logs_seconds: bool = False  # its times are whole seconds


def version_of(agent: Agent, installed: Path) -> str:
    """The release installed for `agent` under `installed`: its npm package's version (a
    platform build's, such as `0.169.0-linux-x64`, without its platform), or its PyPI
    distribution's in the venv."""
    if agent.registry == "pypi":
        dist = agent.package.replace("-", "_")
        for info in installed.glob(f"lib/python*/site-packages/{dist}-*.dist-info"):
            return info.name.removesuffix(".dist-info").split("-", 1)[1]
        return "?"
    for folder in agent.binary(installed).parents:
        manifest = folder / "package.json"
        if manifest.exists():
            return str(json.loads(manifest.read_text())["version"]).split("-")[0]
    return "?"
