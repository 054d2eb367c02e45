"""Claude Code parser: the source suite on tests/data fixtures, then its own rules."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import orjson
import pytest

from tests.conftest import DATA
from tests.sources.suite import SourceSuite, parse_all
from tracehouse.model import ids
from tracehouse.parsers import claude_code
from tracehouse.parsers.base import ParseOptions
from tracehouse.parsers.claude_code.discover import read_meta
from tracehouse.state.watermark import Action

HOME = DATA / "claude" / "home"
PROJECT = HOME / ".claude" / "projects" / "-tmp-demo"
MAIN = "11111111-1111-4111-8111-111111111111"


@pytest.fixture
def parser():
    return claude_code


@pytest.fixture
def units():
    return claude_code.discover([HOME / ".claude"])


@pytest.fixture
def bad_unit(tmp_path):
    project = tmp_path / ".claude" / "projects" / "-tmp-bad"
    project.mkdir(parents=True)
    good = (PROJECT / f"{MAIN}.jsonl").read_bytes().splitlines(keepends=True)
    body = [
        *good[:4],
        b"{not json at all\n",
        b"[1, 2, 3]\n",
        b'{"type": "totally-new-record", "x": 1}\n',
        *good[4:],
    ]
    (project / "44444444-4444-4444-8444-444444444444.jsonl").write_bytes(b"".join(body))
    (unit,) = claude_code.discover([tmp_path / ".claude"])
    return unit


class TestClaudeCodeContract(SourceSuite):
    pass


def parsed(name: str):
    units = {Path(u.key).name: u for u in claude_code.discover([HOME / ".claude"])}
    return parse_all(claude_code, units[name])


def rows(frames, table):
    """Rows in source order (frames from parse_all are sorted by primary key)."""
    found = frames[table].to_dicts() if table in frames else []
    return sorted(found, key=lambda r: (r.get("seq") is None, r.get("seq") or 0))


def test_discovery_finds_both_subagent_layouts_and_meta():
    units = claude_code.discover([HOME / ".claude"])
    by_name = {Path(u.key).name: u for u in units}
    assert set(by_name) == {
        f"{MAIN}.jsonl",
        "agent-a0fix0001.jsonl",
        "agent-7e57ab1e.jsonl",
        "22222222-2222-4222-8222-222222222222.jsonl",
        "33333333-3333-4333-8333-333333333333.jsonl",
    }
    child = by_name["agent-a0fix0001.jsonl"].info
    assert child["parent"] == MAIN
    # the meta file is read when the unit is parsed, not on every discovery
    assert read_meta(child["beside"][0])["description"] == "Fix the division"
    assert by_name["agent-7e57ab1e.jsonl"].info["via"] == "Task"


def test_roots_include_claude_config_dir_and_xdg(tmp_path):
    roots = claude_code.default_roots(
        tmp_path, {"CLAUDE_CONFIG_DIR": "/a, /b/projects", "XDG_CONFIG_HOME": "/x"}
    )
    assert [str(r) for r in roots] == [
        str(tmp_path / ".claude"),
        "/x/claude",
        "/a",
        "/b/projects",
    ]


def test_workflow_subagents_are_found(tmp_path):
    run = tmp_path / ".claude/projects/-p/s1/subagents/workflows/wf_1"
    run.mkdir(parents=True)
    (run / "agent-ag1.jsonl").write_text('{"type":"user","uuid":"x","message":{"content":"go"}}\n')
    (run / "journal.jsonl").write_text('{"type":"started","key":"k","agentId":"ag1"}\n')
    (unit,) = claude_code.discover([tmp_path / ".claude"])
    assert unit.info["via"] == "workflow" and unit.info["parent"] == "s1"


def test_message_types_follow_the_design_rule():
    _item, frames, _ = parsed(f"{MAIN}.jsonl")
    kinds = [
        (m["role"], m["message_type"], (m["content"] or "")[:30]) for m in rows(frames, "messages")
    ]
    by_text = {text: (role, mtype) for role, mtype, text in kinds}
    assert by_text["Find the bug in app.py and loo"] == ("user", "user")
    assert by_text["     1\tprint(1/0)\n"] == ("tool", "tool_result")
    assert by_text["[Request interrupted by user]"] == ("user", "host")
    assert by_text["overloaded"] == ("system", "host")
    assert by_text["Conversation compacted"] == ("system", "host")
    assert by_text["This session is being continue"] == ("system", "system")
    assert by_text["No response requested."] == ("assistant", "host")
    assert by_text["<local-command-stdout>Total co"] == ("user", "host")


def test_split_lines_make_one_assistant_message_with_thinking():
    _item, frames, _ = parsed(f"{MAIN}.jsonl")
    first = next(m for m in rows(frames, "messages") if m["source_message_id"] == "msg:msg_1")
    assert first["content"] == "Reading app.py and searching the docs."
    assert first["thinking"] == "Let me read the file."
    assert orjson.loads(first["metadata"])["lines"] == 4


def test_usage_counted_once_per_response_and_totals_are_sums_of_turns():
    item, frames, _ = parsed(f"{MAIN}.jsonl")
    turns = rows(frames, "turns")
    # msg_1 (4 lines, one usage) + msg_2 + msg_3; the Task echo of the child's usage is not
    # counted. Input holds the cache reads and writes (the ledger's convention), so the total
    # is input + output.
    assert turns[0]["input_tokens"] == (10 + 100 + 1000) + (5 + 1200) + (3 + 50 + 1300)
    assert turns[0]["total_tokens"] == turns[0]["input_tokens"] + turns[0]["output_tokens"]
    assert turns[0]["reasoning_tokens"] == 12
    assert turns[0]["total_tokens"] == (10 + 40 + 100 + 1000) + (5 + 20 + 1200) + (
        3 + 7 + 50 + 1300
    )
    for column in (
        "input_tokens",
        "output_tokens",
        "cached_input_tokens",
        "cache_write_tokens",
        "total_tokens",
    ):
        assert item.session[column] == sum(t[column] for t in turns if t[column] is not None)
    statuses = [t["status"] for t in sorted(turns, key=lambda t: t["seq"])]
    assert statuses == ["completed", "aborted", "completed", "completed"]


def test_tool_calls_carry_results_errors_and_the_spawned_session():
    _item, frames, _ = parsed(f"{MAIN}.jsonl")
    calls = {c["tool_name"]: c for c in rows(frames, "tool_calls")}
    assert calls["Read"]["status"] == "completed" and "print(1/0)" in calls["Read"]["result"]
    assert orjson.loads(calls["Read"]["params"]) == {"file_path": "/tmp/demo/app.py"}
    assert calls["Bash"]["status"] == "failed" and "Exit code 1" in calls["Bash"]["error"]
    child = claude_code.parse  # noqa: F841 - the id is derived, not looked up
    assert calls["Task"]["spawned_session_id"] == ids.session_id(
        "claude-code", "-tmp-demo/agent-a0fix0001"
    )


def test_sources_from_web_search_read_and_attachments():
    _item, frames, _ = parsed(f"{MAIN}.jsonl")
    sources = {(s["source_type"], s["uri"]) for s in rows(frames, "message_sources")}
    assert ("web_search", "https://docs.python.org/3/library/exceptions.html") in sources
    assert ("file", "/tmp/demo/app.py") in sources


def test_session_metadata_and_title():
    item, _frames, _ = parsed(f"{MAIN}.jsonl")
    s = item.session
    assert s["title"] == "Fix division by zero in app.py"  # ai-title over summary
    assert s["workspace_path"] == "/tmp/demo" and s["project"] == "demo"
    assert (s["git_branch"], s["tool_version"], s["entrypoint"]) == ("main", "2.1.114", "cli")
    assert s["model"] == "claude-sonnet-4-5"
    assert s["metadata"]["records"]["file-history-snapshot"] == 1
    assert "brand-new-record" in s["metadata"]["unknown_records"][0]


def test_subagent_session_is_linked_and_its_prompt_attributed():
    item, frames, _ = parsed("agent-a0fix0001.jsonl")
    s = item.session
    assert s["is_subagent"] and s["task_description"] == "Fix the division"
    assert s["parent_session_id"] == ids.session_id("claude-code", MAIN)
    prompt = rows(frames, "messages")[0]
    assert orjson.loads(prompt["meta"]) == {
        "source": "task",
        "source_agent_id": ids.session_id("claude-code", MAIN),
        "via": "Task",
        "entrypoint": "cli",
    }


def test_a_prompt_is_queued_only_when_it_waited(tmp_path: Path):
    """Claude Code enqueues every prompt: one dequeued before any reply (as `-p` does, 5 ms
    later) never waited; one enqueued while a reply was still being written did."""
    _item, frames, _ = parsed(f"{MAIN}.jsonl")
    at_once = next(m for m in rows(frames, "messages") if m["content"] == "now add a test")
    assert "queued" not in orjson.loads(at_once["meta"] or "{}")
    lines = (HOME / ".claude" / "projects" / "-tmp-demo" / f"{MAIN}.jsonl").read_text()
    lines = lines.splitlines(keepends=True)
    enqueue = next(i for i, line in enumerate(lines) if '"enqueue"' in line)
    reply = max(i for i, line in enumerate(lines[:enqueue]) if '"type":"assistant"' in line)
    lines.insert(reply, lines.pop(enqueue))  # typed while the last reply was being written
    home = tmp_path / ".claude" / "projects" / "-tmp-demo"
    home.mkdir(parents=True)
    (home / f"{MAIN}.jsonl").write_text("".join(lines))
    unit = next(u for u in claude_code.discover([tmp_path / ".claude"]) if MAIN in u.key)
    _item, frames, _ = parse_all(claude_code, unit)
    waited = next(m for m in rows(frames, "messages") if m["content"] == "now add a test")
    assert orjson.loads(waited["meta"])["queued"] is True


def test_warm_up_agent_output_belongs_to_a_turn():
    item, frames, _ = parsed("agent-7e57ab1e.jsonl")
    assert item.session["total_tokens"] == 5
    assert rows(frames, "turns")[0]["total_tokens"] == 5


def test_files_without_conversation_only_move_their_watermark():
    for name in (
        "22222222-2222-4222-8222-222222222222.jsonl",
        "33333333-3333-4333-8333-333333333333.jsonl",
    ):
        item, frames, rejects = parsed(name)
        assert item is None and not frames and not rejects


def _copy(tmp_path) -> Path:
    dest = tmp_path / "home"
    shutil.copytree(HOME, dest)
    return dest / ".claude" / "projects" / "-tmp-demo" / f"{MAIN}.jsonl"


def test_a_partial_last_line_waits_until_complete(tmp_path):
    path = _copy(tmp_path)
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:-1]) + lines[-1][:20])
    (unit,) = [u for u in claude_code.discover([path.parents[2]]) if u.key == str(path)]
    fresh = ParseOptions(now=time.time())  # the file was just written: not quiet
    first = claude_code.parse(unit, None, fresh)
    assert first.cursor["offset"] == sum(len(x) for x in lines[:-1])
    again = claude_code.parse(unit, first.cursor, fresh)
    assert again.action is Action.WAIT and again.item is None
    with path.open("ab") as f:
        f.write(lines[-1][20:])
    done = claude_code.parse(unit, again.cursor, fresh)
    assert done.action is Action.APPEND and done.cursor["offset"] == path.stat().st_size
    assert len(done.rows["messages"]) >= 1


def test_a_quiet_final_line_without_newline_is_complete(tmp_path):
    path = _copy(tmp_path)
    path.write_bytes(path.read_bytes().rstrip(b"\n"))
    (unit,) = [u for u in claude_code.discover([path.parents[2]]) if u.key == str(path)]
    result = claude_code.parse(unit, None, ParseOptions(now=time.time() + 60))
    assert result.cursor["offset"] == path.stat().st_size


def test_a_watermark_from_before_the_kit_port_is_read_whole_once(tmp_path):
    """Turns and sums are the kit's since issue #65: a cursor that kept the builder's own state
    (shape 0) is not resumed; the file is read whole when it grows, to a first read's rows."""
    from tracehouse.parsers.kit.jsonl_unit import SHAPE

    path = _copy(tmp_path)
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:10]))
    (unit,) = [u for u in claude_code.discover([path.parents[2]]) if u.key == str(path)]
    options = ParseOptions(now=time.time() + 60)
    first = claude_code.parse(unit, None, options)
    assert first.cursor["state"][SHAPE] == 1
    old = {**first.cursor, "state": {"v": 1, "seq": 9, "turn_seq": 2, "usage_input": "with cache"}}
    path.write_bytes(b"".join(lines))
    reread = claude_code.parse(unit, old, options)
    whole = claude_code.parse(unit, None, options)
    assert reread.action is Action.FULL and reread.bytes_read == path.stat().st_size
    assert all(sorted(map(repr, reread.rows[t])) == sorted(map(repr, whole.rows[t]))
               for t in whole.rows)  # fmt: skip
    assert claude_code.parse(unit, first.cursor, options).action is Action.APPEND


def test_a_rewritten_file_is_parsed_again_from_the_start(tmp_path):
    path = _copy(tmp_path)
    (unit,) = [u for u in claude_code.discover([path.parents[2]]) if u.key == str(path)]
    options = ParseOptions(now=time.time() + 60)
    first = claude_code.parse(unit, None, options)
    path.write_bytes(path.read_bytes().replace(b"Find the bug", b"Find the BUG") + b"\n")
    second = claude_code.parse(unit, first.cursor, options)
    assert second.action is Action.FULL


def test_lone_surrogates_and_invalid_utf8_are_kept_not_rejected(tmp_path):
    from tracehouse.store.sqlite.store import SqliteStore

    path = _copy(tmp_path)
    with path.open("ab") as f:
        f.write(
            b'{"type":"user","uuid":"sur1","parentUuid":"u7","timestamp":'
            b'"2026-03-01T11:00:00.000Z","message":{"role":"user","content":"emoji \\ud83d cut"}}\n'
        )
        f.write(
            b'{"type":"user","uuid":"sur2","parentUuid":"sur1","timestamp":'
            b'"2026-03-01T11:00:01.000Z","message":{"role":"user",'
            b'"content":"bytes \xff\xfe here"}}\n'
        )
    (unit,) = [u for u in claude_code.discover([path.parents[2]]) if u.key == str(path)]
    _item, frames, rejects = parse_all(claude_code, unit)
    assert rejects == []
    contents = {m["content"] for m in frames["messages"].to_dicts()}
    assert "emoji \ufffd cut" in contents and "bytes \ufffd\ufffd here" in contents
    store = SqliteStore(tmp_path / "l.db")  # and the store can hold them
    from tests.pipeline.helpers import backfill

    assert backfill(store, path.parents[3]).ok
    store.close()


def test_a_side_question_keeps_only_its_own_lines(tmp_path: Path):
    """An `aside_question` sidechain replays its parent's lines with the same uuids, tool
    results included: all of them stay with the parent, and what the side question says after
    them links to nothing outside its own session."""
    aside = DATA / "claude" / "aside" / ".claude"
    found = {}
    for unit in claude_code.discover([aside]):
        item, frames, rejects = parse_all(claude_code, unit)
        assert rejects == []
        found[item.session["is_subagent"]] = (item, rows(frames, "messages"))
    (_, parent), (child, side) = found[False], found[True]
    assert [m["source_message_id"] for m in side] == ["s-q1", "msg:msg_s1"]
    assert len(parent) == 4
    own = {m["message_id"] for m in side}
    assert all(m["parent_message_id"] in own | {None} for m in side)
    assert side[0]["parent_message_id"] is None
    assert child.session["parent_source_session_id"] == "22222222-2222-4222-8222-222222222222"


def test_new_envelope_fields_are_kept_and_the_prompt_keeps_its_timestamp(tmp_path) -> None:
    """Claude Code 2.1.3xx writes `sentAtMs` and `rowSource` on a prompt's line (issue #64):
    kept in the message's metadata as written; the turn starts at the line's `timestamp`."""
    home = tmp_path / "home"
    shutil.copytree(DATA / "claude" / "home", home)
    path = (
        home / ".claude" / "projects" / "-tmp-demo" / "11111111-1111-4111-8111-111111111111.jsonl"
    )
    lines = []
    for line in path.read_bytes().splitlines():
        record = orjson.loads(line)
        if record.get("uuid") == "u1":
            record |= {"sentAtMs": 1772359199950, "rowSource": "prompt"}
        lines.append(orjson.dumps(record))
    path.write_bytes(b"\n".join(lines) + b"\n")
    unit = next(u for u in claude_code.discover([home / ".claude"]) if u.path == path)
    _item, frames, rejects = parse_all(claude_code, unit)
    assert rejects == []
    prompt = next(m for m in frames["messages"].to_dicts() if m["source_message_id"] == "u1")
    assert orjson.loads(prompt["metadata"])["extra"] == {"sentAtMs": 1772359199950,
                                                         "rowSource": "prompt"}  # fmt: skip
    turn = next(t for t in frames["turns"].to_dicts() if t["seq"] == 0)
    assert prompt["created_at"] == turn["started_at"] == "2026-03-01T10:00:00.000Z"
