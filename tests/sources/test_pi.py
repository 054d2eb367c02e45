"""Pi coding agent: the source suite on tests/data, then its rules: usage with cost per reply
(input without the cache, in the ledger's convention), models as they change, `session_info`
titles, errors as turn status."""

from __future__ import annotations

import pytest

from tests.conftest import DATA
from tests.sources.agents import sessions, spoiled_copy
from tests.sources.suite import SourceSuite
from tracehouse.parsers import pi

ROOT = DATA / "pi" / "home" / ".pi" / "agent"
SID = "019f67be-83ab-77ff-9d44-000000000001"


@pytest.fixture
def parser():
    return pi


@pytest.fixture
def units():
    return pi.discover([ROOT])


@pytest.fixture
def bad_unit(tmp_path):
    (source,) = pi.discover([ROOT])
    target = tmp_path / "sessions" / "--x--" / source.path.name
    spoiled_copy(source.path, target, ["{not json", '{"type": "totally-new-record"}', "[1]"], 3)
    (unit,) = pi.discover([tmp_path])
    return unit


class TestPiContract(SourceSuite):
    pass


def test_a_session_reads_with_its_usage_models_and_title(units) -> None:
    ((item, rows),) = sessions(pi, units).values()
    session = item.session
    assert item.source_session_id == SID
    assert session["title"] == "Fix the home test"  # session_info names it
    assert session["workspace_path"] == "/home/dev/site" and session["project"] == "site"
    assert session["model"] == "gpt-5" and session["llm_provider"] == "openai"
    assert session["turn_count"] == 2 and session["tool_call_count"] == 1
    # input 12 + cache 3000 read + 500 written, then 30 + 3500 read
    assert session["input_tokens"] == 7042 and session["output_tokens"] == 60
    assert session["cached_input_tokens"] == 6500 and session["cache_write_tokens"] == 500
    assert session["total_tokens"] == 7102
    # Pi 0.73 counts no reasoning (its `usage` has no such field): not recorded, never 0
    assert session["reasoning_tokens"] is None
    assert session["metadata"]["cost_usd"] == pytest.approx(0.0049)
    turns = rows["turns"].sort("seq")
    assert turns["status"].to_list() == ["completed", "error"]
    assert turns["model"].to_list() == ["claude-sonnet-4-5", "gpt-5"]
    (call,) = rows["tool_calls"].to_dicts()
    assert call["tool_name"] == "read" and call["status"] == "completed"
    assert "def test_home" in call["result"]
    first = rows["messages"].sort("seq").row(1, named=True)
    assert first["thinking"] == "Read the test first." and first["model"] == "claude-sonnet-4-5"
