"""The real agents the tests drive, as `.ci/run` installs them from the npm registry under
conformance/npm and from PyPI under conformance/pypi (the conformance suite's pins,
`conformance/install.py`), and the environment that keeps them offline: their model is the
scripted one on 127.0.0.1, and any other address goes to a closed local port."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conformance.agents import CLAUDE_CODE, CODEX
from conformance.install import NODE_MODULES

__all__ = ["NODE_MODULES", "required"]


def required(found: Path, what: str, how: str = "npm ci --prefix conformance/npm") -> Path:
    """`found`, installed by `how` (`.ci/run` runs `python -m conformance install`): a test
    without it skips, saying so, and fails in CI (TRACEHOUSE_REQUIRE_NPM)."""
    if not found.exists():
        why = f"{found} missing: `{how}` installs {what}"
        if os.environ.get("TRACEHOUSE_REQUIRE_NPM"):
            pytest.fail(why)
        pytest.skip(why)
    return found


def claude_code() -> Path:
    return required(CLAUDE_CODE.binary(NODE_MODULES), "Claude Code")


def codex() -> Path:
    return required(CODEX.binary(NODE_MODULES), "the Codex CLI")


def codex_home(home: Path, model_url: str) -> None:
    """`~/.codex` whose model is the scripted one: a provider of its own, at 127.0.0.1."""
    CODEX.setup(home, model_url)


def offline_env(home: Path, model_url: str) -> dict[str, str]:
    """An agent's environment (Claude Code's, with Codex's home and key beside it): its own
    home, its model on 127.0.0.1, no telemetry, no update check, every other address closed."""
    return {**CLAUDE_CODE.setup(home, model_url), "CODEX_HOME": str(home / ".codex"),
            "SCRIPTED_API_KEY": "sk-scripted"}  # fmt: skip
