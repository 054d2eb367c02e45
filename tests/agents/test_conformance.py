"""The conformance suite (conformance/README.md) in the test run: each agent at its pinned
release, driven through the scenario against the scripted model — a first run and resumes of
the same session — and the ledger of what it wrote compared with what it did: no difference."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.__main__ import check
from conformance.agents import AGENTS
from conformance.install import how_to_install, installed
from tests.agents.installed import required


@pytest.mark.slow
@pytest.mark.parametrize("name", list(AGENTS))
def test_the_ledger_equals_what_the_agent_did(name: str, tmp_path: Path) -> None:
    agent = AGENTS[name]
    where = installed(agent)
    required(agent.binary(where), agent.package, how_to_install(agent))
    differences = check(agent, where, tmp_path)
    assert not differences, "\n".join(map(str, differences))
