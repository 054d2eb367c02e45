"""A source is declared once (issue #65): its package, and one line of `model/sources.py` that
names its provider, package and label prefix. Nothing else in the program names a source read
on the kit; the registry refuses a package that declares another provider than its line."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tracehouse.model import ids
from tracehouse.model.sources import SOURCES, Source
from tracehouse.model.tables import PROVIDERS
from tracehouse.parsers import registry

SRC = Path(__file__).resolve().parents[2] / "src" / "tracehouse"
# Sources that something besides their ingest serves (resume into them, their status line, their
# MCP setup, a rule of their errors or token convention): named where that is done.
SERVED = {"claude-code", "codex", "cursor", "gemini-cli", "opencode", "cursor-agent",
          "copilot-cli", "qwen-code", "crush", "pi", "kimi-cli"}  # fmt: skip


def test_every_listed_source_is_read_by_its_package_under_its_label() -> None:
    assert tuple(registry.PARSERS) == PROVIDERS == tuple(SOURCES)
    for provider, (package, prefix, _clock) in SOURCES.items():
        assert registry.PARSERS[provider].__name__ == f"tracehouse.parsers.{package}"
        assert ids.session_label(provider, "abcdef12-3456").startswith(f"{prefix}-")
    assert len({source.label for source in SOURCES.values()}) == len(SOURCES)


@pytest.mark.parametrize("provider", sorted(set(SOURCES) - SERVED))
def test_a_source_is_named_nowhere_but_its_package_and_its_line(provider: str) -> None:
    package = SOURCES[provider][0]
    named = re.compile(rf"[\"']{re.escape(provider)}[\"']")
    found = [
        path.relative_to(SRC).as_posix()
        for path in SRC.rglob("*.py")
        if not path.is_relative_to(SRC / "parsers" / package)
        and path != SRC / "model" / "sources.py"
        and named.search(path.read_text(encoding="utf-8"))
    ]
    assert not found, f"{provider} is named outside its package and model/sources.py"


def test_a_package_that_reads_another_provider_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(SOURCES, "not-zed", Source("zed", "nz"))
    with pytest.raises(ImportError, match="parsers/zed reads 'zed', listed as 'not-zed'"):
        registry._parsers()


@pytest.mark.parametrize(
    ("provider", "source_id", "label"),
    [
        # ids that begin with a clock (`Source.clock_first`): cut from their random end
        ("codex", "019C0000-0000-7000-8000-0000000000FF", "cx-000000ff"),
        ("opencode", "ses_3f2a1b0c9d8eAbCdEfGhIjKlMn", "oc-ghijklmn"),
        # any other id, and one of those sources not of that shape: from its start
        ("codex", "file:rollout-x", "cx-rolloutx"),
        ("claude-code", "6a963594-aaaa-4bbb-8ccc-dddddddddddd", "cc-6a963594"),
        ("claude-code", "-tmp-demo/agent-a0fix0001", "cc-a0fix000"),
    ],
)
def test_a_label_is_cut_where_the_id_is_its_own(provider: str, source_id: str, label: str) -> None:
    assert ids.session_label(provider, source_id) == label
