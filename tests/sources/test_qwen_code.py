"""Qwen Code: the source suite on tests/data, then its rules: the telemetry events are the
token truth (a subagent's calls included, the assistant's twin counts not added again), slash
commands and API errors, and the prompt log bringing back a session with no chat file."""

from __future__ import annotations

import pytest

from tests.conftest import DATA
from tests.sources.agents import sessions, spoiled_copy
from tests.sources.suite import SourceSuite
from tracehouse.parsers import qwen_code

ROOT = DATA / "qwen" / "home" / ".qwen"
SID = "6676775b-e7b1-41b0-a6de-5f00e4adf771"


@pytest.fixture
def parser():
    return qwen_code


@pytest.fixture
def units():
    return [u for u in qwen_code.discover([ROOT]) if u.key.endswith(".jsonl")]


@pytest.fixture
def bad_unit(tmp_path):
    (chat,) = [u for u in qwen_code.discover([ROOT]) if u.key.endswith(".jsonl")]
    target = tmp_path / "projects" / "p" / "chats" / chat.path.name
    spoiled_copy(chat.path, target, ["{not json", '{"type": "totally-new-record"}', "3"], 3)
    (unit,) = qwen_code.discover([tmp_path])
    return unit


class TestQwenContract(SourceSuite):
    pass


def test_a_chat_counts_every_model_call_once(units) -> None:
    item, rows = sessions(qwen_code, units)[SID]
    session = item.session
    assert session["title"] == "Add a health check route"  # not the /ide command
    assert session["git_branch"] == "main" and session["tool_version"] == "0.14.2"
    # three api_response events (one a subagent's); the assistants' usageMetadata repeat two
    assert session["input_tokens"] == 32197 + 6000 + 32500
    assert session["output_tokens"] == 258 + 100 + 60
    assert session["cached_input_tokens"] == 30000 + 32191
    assert session["reasoning_tokens"] == 36
    notices = rows["messages"].filter(rows["messages"]["message_type"] == "host").sort("seq")
    assert notices["content"].to_list() == ["Failed to install the IDE companion.",
                                            "rate_limit: 429 Too Many Requests"]  # fmt: skip
    (call,) = rows["tool_calls"].to_dicts()
    assert call["tool_name"] == "read_file" and call["result"] == "app = Flask(__name__)"


def test_the_prompt_log_brings_back_only_sessions_without_a_chat() -> None:
    (log,) = [u for u in qwen_code.discover([ROOT]) if u.key.endswith("logs.json")]
    found = sessions(qwen_code, [log])
    assert list(found) == ["e7c6b5f2-0000-4000-8000-00000000abcd@logs"]
    item, _rows = found["e7c6b5f2-0000-4000-8000-00000000abcd@logs"]
    assert item.session["metadata"]["recovered_from"] == "logs.json"
    assert item.session["message_count"] == 2


def test_a_cursor_of_another_state_shape_is_read_whole_once(tmp_path) -> None:
    """A source whose builder comes to keep another resume state raises its `STATE_SHAPE`
    (issue #65: the older sources' ports): a cursor written before is not resumed, its file is
    read whole again once it grows, to the rows a first read gives; then appends resume."""
    import time

    from tracehouse.parsers.base import Action, ParseOptions
    from tracehouse.parsers.kit.jsonl_session import jsonl_parser
    from tracehouse.parsers.kit.jsonl_unit import SHAPE
    from tracehouse.parsers.qwen_code.chats import QwenChat

    class Reshaped(QwenChat):
        STATE_SHAPE = 1

    (chat,) = [u for u in qwen_code.discover([ROOT]) if u.key.endswith(".jsonl")]
    lines = chat.path.read_bytes().splitlines(keepends=True)
    target = tmp_path / "projects" / "p" / "chats" / chat.path.name
    target.parent.mkdir(parents=True)
    target.write_bytes(b"".join(lines[:4]))
    (unit,) = [u for u in qwen_code.discover([tmp_path]) if u.key.endswith(".jsonl")]
    options = ParseOptions(now=time.time() + 3600)
    before, after = jsonl_parser(QwenChat), jsonl_parser(Reshaped)
    first = before(unit, None, options)
    assert SHAPE not in first.cursor["state"]  # shape 0: cursors as they were written before

    target.write_bytes(b"".join(lines))  # the file grows
    reread = after(unit, first.cursor, options)
    assert reread.action is Action.FULL and reread.bytes_read == target.stat().st_size
    assert reread.cursor["state"][SHAPE] == 1
    whole = after(unit, None, options)
    assert reread.rows.keys() == whole.rows.keys()
    assert all(sorted(map(repr, reread.rows[t])) == sorted(map(repr, whole.rows[t]))
               for t in whole.rows)  # fmt: skip
    assert before(unit, first.cursor, options).action is Action.APPEND  # the same shape resumes

    with target.open("ab") as out:  # and with the new shape, an append is an append
        out.write(lines[-1])
    appended = after(unit, reread.cursor, options)
    assert appended.action is Action.APPEND and appended.bytes_read == len(lines[-1])
