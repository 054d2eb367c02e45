"""Roo Code and Kilo Code: forks of Cline that keep its task layout under their own extension
ids, read by Cline's task reader as sources of their own. The source suite on each, then what
the forks write that Cline did not: a subtask's result, a condensed context, checkpoints,
feedback on a diff, an MCP tool's call and response."""

from __future__ import annotations

import json

import pytest

from tests.conftest import DATA
from tests.sources.agents import sessions
from tests.sources.suite import SourceSuite
from tracehouse.parsers import kilo_code, roo_code

ROO = DATA / "roo" / "home" / ".config" / "Code" / "User" / "globalStorage"
KILO = DATA / "kilo" / "home" / ".config" / "Code" / "User" / "globalStorage"
ROO_ROOT, KILO_ROOT = ROO / roo_code.EXTENSION, KILO / kilo_code.EXTENSION


def _bad_unit(parser, root, tmp_path):  # type: ignore[no-untyped-def]
    (source,) = parser.discover([root])
    records = json.loads(source.path.read_text())
    records[2:2] = [7, {"ts": 1767644899100, "type": "say", "say": "totally-new-record"}]
    target = tmp_path / "tasks" / source.path.parent.name / "ui_messages.json"
    target.parent.mkdir(parents=True)
    target.write_text(json.dumps(records))
    (unit,) = parser.discover([tmp_path])
    return unit


class TestRooCodeContract(SourceSuite):
    reject_locations = ("[",)

    @pytest.fixture
    def parser(self):  # type: ignore[no-untyped-def]
        return roo_code

    @pytest.fixture
    def units(self):  # type: ignore[no-untyped-def]
        return roo_code.discover([ROO_ROOT])

    @pytest.fixture
    def bad_unit(self, tmp_path):  # type: ignore[no-untyped-def]
        return _bad_unit(roo_code, ROO_ROOT, tmp_path)


class TestKiloCodeContract(TestRooCodeContract):
    @pytest.fixture
    def parser(self):  # type: ignore[no-untyped-def]
        return kilo_code

    @pytest.fixture
    def units(self):  # type: ignore[no-untyped-def]
        return kilo_code.discover([KILO_ROOT])

    @pytest.fixture
    def bad_unit(self, tmp_path):  # type: ignore[no-untyped-def]
        return _bad_unit(kilo_code, KILO_ROOT, tmp_path)


def test_a_roo_task_with_its_subtask_condensing_and_feedback_on_a_diff() -> None:
    ((item, rows),) = sessions(roo_code, roo_code.discover([ROO_ROOT])).values()
    session = item.session
    assert item.source_provider == "roo-code"
    assert session["title"] == "Fix the health route"
    assert session["model"] == "claude-sonnet-4-5" and session["workspace_path"] == "/home/dev/site"
    # tokensIn leaves the cache out: 1200 + 900 written, 300 + 2100 read, 500 + 2400 read
    assert session["input_tokens"] == 7400 and session["output_tokens"] == 180
    assert session["cached_input_tokens"] == 4500 and session["cache_write_tokens"] == 900
    messages = rows["messages"].sort("seq").to_dicts()
    prompts = [m["content"] for m in messages if m["message_type"] == "user"]
    assert prompts[0] == "Fix the health route" and '"appliedDiff"' in prompts[1]
    notices = {json.loads(m["metadata"])["notice"]: m["content"] for m in messages
               if m["message_type"] == "host"}  # fmt: skip
    assert notices["subtask_result"] == "Added tests/test_health.py; it fails as expected."
    assert "condense_context" in notices
    calls = rows["tool_calls"].sort("seq").to_dicts()
    assert [c["tool_name"] for c in calls] == ["readFile", "newTask", "execute_command"]
    assert calls[2]["result"] == "1 passed"
    assert session["metadata"].get("unknown_records") is None


def test_a_kilo_task_with_an_mcp_call() -> None:
    ((item, rows),) = sessions(kilo_code, kilo_code.discover([KILO_ROOT])).values()
    assert item.source_provider == "kilo-code"
    (call,) = rows["tool_calls"].to_dicts()
    assert call["tool_name"] == "search_docs" and call["status"] == "completed"
    assert call["result"] == "Routes are registered with @app.route."
    assert json.loads(call["params"])["serverName"] == "docs"
    assert item.session["model"] == "kilo/auto"


def test_each_looks_in_its_own_extensions_storage(tmp_path) -> None:
    roo = roo_code.default_roots(tmp_path, {})
    assert tmp_path / ".config" / "Code" / "User" / "globalStorage" / roo_code.EXTENSION in roo
    assert all("kilocode.kilo-code" in str(p) for p in kilo_code.default_roots(tmp_path, {}))
