"""The real agents the tests drive, as `.ci/run` installs them from the npm registry under
conformance/npm, and the environment that keeps them offline: their model is the scripted one on
127.0.0.1 (Claude Code's by its base URL, Codex's by a provider in its config), and any other
address goes to a closed local port."""

from __future__ import annotations

import os
import platform
from pathlib import Path

import pytest

from tests.conftest import REPO

NODE_MODULES = REPO / "conformance" / "npm" / "node_modules"


def _platform() -> str:
    machine = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64"}.get(
        platform.machine().lower(), platform.machine().lower()
    )
    return f"{platform.system().lower()}-{machine}"


def required(found: Path, what: str) -> Path:
    """`found`, installed by `npm ci --prefix conformance/npm`: a test without it skips, saying so,
    and fails in CI (TRACEHOUSE_REQUIRE_NPM)."""
    if not found.exists():
        why = f"{found} missing: `npm ci --prefix conformance/npm` installs {what}"
        if os.environ.get("TRACEHOUSE_REQUIRE_NPM"):
            pytest.fail(why)
        pytest.skip(why)
    return found


def claude_code() -> Path:
    """Claude Code's native binary, from its platform package (the wrapper's own `bin` is a
    placeholder that an install script replaces, and `.ci/run` runs no install script)."""
    return required(NODE_MODULES / "@anthropic-ai" / f"claude-code-{_platform()}" / "claude",
                    "Claude Code")  # fmt: skip


_CODEX_TARGETS = {
    "linux-x64": "x86_64-unknown-linux-musl",
    "linux-arm64": "aarch64-unknown-linux-musl",
}


def codex() -> Path:
    """Codex's native binary, from its platform package (its `bin/codex.js` only finds it)."""
    target = _CODEX_TARGETS.get(_platform(), "")
    found = NODE_MODULES / "@openai" / f"codex-{_platform()}" / "vendor" / target / "bin" / "codex"
    return required(found, "the Codex CLI")


def codex_home(home: Path, model_url: str) -> Path:
    """`~/.codex` whose model is the scripted one: a provider of its own, at 127.0.0.1."""
    config = home / ".codex"
    config.mkdir(parents=True, exist_ok=True)
    (config / "config.toml").write_text(
        'model = "gpt-5.3-codex"\nmodel_provider = "scripted"\n\n'
        '[model_providers.scripted]\nname = "scripted"\n'
        f'base_url = "{model_url}"\nenv_key = "SCRIPTED_API_KEY"\nwire_api = "responses"\n'
    )
    return config


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
        "CODEX_HOME": str(home / ".codex"),
        "SCRIPTED_API_KEY": "sk-scripted-model",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "HTTPS_PROXY": closed,
        "HTTP_PROXY": closed,
        "NO_PROXY": "127.0.0.1,localhost",
    }
