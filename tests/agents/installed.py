"""The real agents the tests drive, as `.ci/run` installs them from the npm registry under
tests/npm, and the environment that keeps them offline: their model is the scripted one on
127.0.0.1, and any other address goes to a closed local port."""

from __future__ import annotations

import os
import platform
from pathlib import Path

import pytest

from tests.conftest import REPO

NODE_MODULES = REPO / "tests" / "npm" / "node_modules"


def _platform() -> str:
    machine = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64"}.get(
        platform.machine().lower(), platform.machine().lower()
    )
    return f"{platform.system().lower()}-{machine}"


def claude_code() -> Path:
    """Claude Code's native binary, from its platform package (the wrapper's own `bin` is a
    placeholder that an install script replaces, and `.ci/run` runs no install script)."""
    found = NODE_MODULES / "@anthropic-ai" / f"claude-code-{_platform()}" / "claude"
    if not found.exists():
        why = f"{found} missing: `npm ci --prefix tests/npm` installs Claude Code"
        if os.environ.get("TRACEHOUSE_REQUIRE_NPM"):
            pytest.fail(why)
        pytest.skip(why)
    return found


def offline_env(home: Path, model_url: str) -> dict[str, str]:
    """An agent's environment: its own home, its model on 127.0.0.1, no telemetry, no update
    check, and a proxy that answers nothing for every other address."""
    closed = "http://127.0.0.1:9"
    return {
        "HOME": str(home),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "ANTHROPIC_BASE_URL": model_url,
        "ANTHROPIC_API_KEY": "sk-ant-scripted-model",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "HTTPS_PROXY": closed,
        "HTTP_PROXY": closed,
        "NO_PROXY": "127.0.0.1,localhost",
    }
