"""Aider: the source suite on tests/data (a project's chat history with its input history),
then its rules: one session per launch, prompts of several lines, token lines with their cost,
edits and commits as calls, prompt times from the input history, found under project roots."""

from __future__ import annotations

import json
import shutil
import time

import pytest

from tests.conftest import DATA
from tests.sources.agents import sessions
from tests.sources.suite import SourceSuite, parse_all_items
from tracehouse.config import Settings
from tracehouse.parsers import aider
from tracehouse.pipeline.sources import resolve_sources

HOME = DATA / "aider" / "home"


@pytest.fixture(autouse=True)
def zone(monkeypatch):
    """Aider writes local times: these tests read them as a machine in UTC would, unless one
    sets another zone (`zone(name)`)."""

    def set_zone(name: str) -> None:
        monkeypatch.setenv("TZ", name)
        time.tzset()

    set_zone("UTC")
    yield set_zone
    monkeypatch.undo()
    time.tzset()


@pytest.fixture
def parser():
    return aider


@pytest.fixture
def units():
    return aider.discover([HOME])


@pytest.fixture
def bad_unit(tmp_path):
    project = tmp_path / "site"
    shutil.copytree(HOME / "projects" / "site", project)
    chat = project / ".aider.chat.history.md"
    lines = chat.read_bytes().split(b"\n")
    lines[12:12] = [b"caf\xe9 au lait", b"> totally-new-record: a line aider never printed"]
    chat.write_bytes(b"\n".join(lines))
    (unit,) = aider.discover([tmp_path])
    return unit


class TestAiderContract(SourceSuite):
    def test_unknown_record_types_are_kept_not_fatal(self, parser, bad_unit):
        # Aider writes no record types: a line it printed that is not understood is kept as
        # the host's words.
        _items, frames, _rejects = parse_all_items(parser, bad_unit)
        assert any("totally-new-record" in (c or "") for c in frames["messages"]["content"])


def test_a_project_is_found_under_the_project_roots() -> None:
    settings = Settings(home=str(HOME), project_roots=("~",))
    roots = resolve_sources(settings, {"aider": ()}, home_given=True)["aider"]
    assert roots == [HOME]
    assert [u.path.name for u in aider.discover(roots)] == [".aider.chat.history.md"]


def test_each_launch_is_a_session_with_its_prompts_tokens_and_calls(units) -> None:
    found = sessions(aider, units)
    assert len(found) == 2  # the launch with no prompt is no session
    first, rows = next(v for v in found.values() if v[0].session["created_at"] < "2025-12-04")
    session = first.session
    assert session["title"] == "Add a /health route to app.py"
    assert session["model"] == "openrouter/openai/gpt-4o-mini"
    assert session["tool_version"] == "0.86.1" and session["project"] == "site"
    assert session["input_tokens"] == 5500 and session["output_tokens"] == 192
    assert session["cached_input_tokens"] == 1200
    assert session["metadata"]["cost_usd"] == pytest.approx(0.00042)
    prompts = rows["messages"].filter(rows["messages"]["role"] == "user").sort("seq")
    assert prompts["content"].to_list() == ["Add a /health route to app.py", "/run pytest -q",
                                            "Now add a test\nfor it"]  # fmt: skip
    assert prompts["created_at"].to_list() == ["2025-12-03T14:44:06.000Z",
                                               "2025-12-03T14:46:07.000Z",
                                               "2025-12-03T14:48:06.000Z"]  # fmt: skip
    calls = rows["tool_calls"].sort("seq").to_dicts()
    assert [c["tool_name"] for c in calls] == ["apply_edit", "git_commit"]
    assert json.loads(calls[1]["params"]) == {
        "sha": "1b2614a",
        "message": "feat: add /health route",
    }
    last, rows = next(v for v in found.values() if v[0].session["created_at"] > "2025-12-04T09:01")
    assert last.session["model"] == "gemini/gemini-2.5-pro"
    notices = rows["messages"].filter(rows["messages"]["message_type"] == "host").sort("seq")
    assert "quota exceeded" in notices["content"].to_list()[-1]


def test_a_history_written_on_windows_reads_the_same(tmp_path) -> None:
    project = tmp_path / "site"
    shutil.copytree(HOME / "projects" / "site", project)
    chat = project / ".aider.chat.history.md"
    chat.write_bytes(chat.read_bytes().replace(b"\n", b"\r\n"))
    windows = sessions(aider, aider.discover([tmp_path]))
    unix = sessions(aider, aider.discover([HOME]))
    assert len(windows) == len(unix) == 2
    for (item, rows), (twin, twin_rows) in zip(windows.values(), unix.values(), strict=True):
        assert item.session["title"] == twin.session["title"]
        said, twin_said = rows["messages"].sort("seq"), twin_rows["messages"].sort("seq")
        assert said["content"].to_list() == twin_said["content"].to_list()


RELEASED = DATA / "aider" / "released" / "0.86"


def test_0_86_reasoning_is_thinking_and_the_banner_opens_no_turn_of_its_own() -> None:
    """Aider 0.86 wraps a reasoning model's thoughts in `<thinking-content-HASH>` tags inside
    the reply, and every launch prints a banner before the first prompt (issue #64: the tags
    stayed in `content` with `thinking` NULL, and the banner was a turn of its own, so three
    prompts made four turns). A reply's edit ends with `>>>>>>> REPLACE`: the reply's own line,
    where aider quotes what it printed as `> text`."""
    ((item, rows),) = sessions(aider, aider.discover([RELEASED])).values()
    turns = rows["turns"].sort("seq")
    assert turns.height == 3
    replies = rows["messages"].filter(rows["messages"]["role"] == "assistant").sort("seq")
    first, second = replies.to_dicts()
    assert first["thinking"].startswith("The user asks about parse_rate.")
    assert (
        first["content"].startswith("`parse_rate` reads")
        and "thinking-content" not in first["content"]
    )
    assert second["thinking"] is None and second["content"].startswith("rates.py")
    # an edit's closing marker is the reply's own line, not aider's quoted output
    assert second["content"].endswith(">>>>>>> REPLACE\n```")
    banner = rows["messages"].filter(rows["messages"]["message_type"] == "host").sort("seq")
    assert "Aider v0.86.2" in banner["content"][0]
    assert banner["turn_id"][0] == turns["turn_id"][0]  # the first prompt's turn
    assert item.session["tool_version"] == "0.86.2"
    assert item.session["title"] == "What does parse_rate do?"


def test_local_times_are_read_in_this_machines_zone_and_stored_in_utc(units, zone) -> None:
    zone("America/New_York")  # December: five hours behind UTC
    found = sessions(aider, units)
    first, rows = next(v for v in found.values() if v[0].session["created_at"] < "2025-12-04")
    prompts = rows["messages"].filter(rows["messages"]["role"] == "user").sort("seq")
    assert prompts["created_at"].to_list()[0] == "2025-12-03T19:44:06.000Z"
    assert first.session["metadata"]["local_offset"] == "-05:00"
    # the session's id stays the one its header names, whatever the zone
    assert first.session["source_session_id"].startswith("20251203T14")


def test_a_count_aider_did_not_print_is_not_recorded() -> None:
    """Aider prints no reasoning count, and a cache part only where litellm reports one (never
    for an OpenAI-compatible provider): what it did not print is NULL, "not recorded", not 0
    (issue #64). The turn that printed `1.2k cache hit` keeps it."""
    ((item, rows),) = sessions(aider, aider.discover([RELEASED])).values()
    spent = [r for r in (item.session, *rows["turns"].to_dicts()) if r["input_tokens"]]
    assert len(spent) == 3  # the session and the two turns that printed `Tokens:`
    for row in spent:
        assert row["reasoning_tokens"] is None
        assert row["cached_input_tokens"] is None and row["cache_write_tokens"] is None
    found = sessions(aider, aider.discover([HOME]))
    turns = [t for _, rows in found.values() for t in rows["turns"].to_dicts()]
    assert sorted(t["cached_input_tokens"] or 0 for t in turns)[-1] == 1200
    assert all(t["reasoning_tokens"] is None for t in turns)
