"""Files a unit's parse reads beside its own: Claude Code's `.meta.json` of a v2.1 subagent (from
2.1.3xx the CLI writes `finished` into it once the task ends, after the transcript's last line),
Qwen Code's and Kimi CLI's subagent meta, Kimi's `state.json`, Droid's `.settings.json`, Copilot
CLI's `workspace.yaml`. The log alone says nothing new: the sidecar's change has it read again,
by a sync and by the live watcher, and only then."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from tests.conftest import DATA
from tests.pipeline.helpers import MAIN, backfill, make_home
from tracehouse.parsers import claude_code
from tracehouse.parsers.registry import PARSERS
from tracehouse.pipeline.options import SyncOptions
from tracehouse.pipeline.sync import sync
from tracehouse.store.sqlite.store import SqliteStore


def _meta(home: Path) -> Path:
    project = home / ".claude" / "projects" / "-tmp-demo"
    return project / MAIN / "subagents" / "agent-a0fix0001.meta.json"


def _task_status(store: SqliteStore) -> str | None:
    (found,) = [r["task_status"] for r in store.rows("sessions") if r["is_subagent"]
                and r["source_session_id"].endswith("a0fix0001")]  # fmt: skip
    return found


def test_a_sidecar_written_after_the_last_line_is_read(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    store = SqliteStore(tmp_path / "l.db")
    try:
        backfill(store, home)
        assert _task_status(store) is None  # the sidecar says nothing of it yet
        meta = _meta(home)
        transcript = meta.with_name("agent-a0fix0001.jsonl")
        before = transcript.stat()
        meta.write_bytes(orjson.dumps({**orjson.loads(meta.read_bytes()), "finished": True}))
        again = backfill(store, home)
        assert (again.parsed, _task_status(store)) == (1, "completed")
        assert transcript.stat().st_mtime_ns == before.st_mtime_ns  # only the sidecar changed
        assert backfill(store, home).parsed == 0  # read again once, not on every run
        meta.write_bytes(orjson.dumps({"agentType": "general-purpose", "stoppedByUser": True}))
        assert (backfill(store, home).parsed, _task_status(store)) == (1, "aborted")
        meta.unlink()  # gone: what it said goes with it
        assert (backfill(store, home).parsed, _task_status(store)) == (1, None)
    finally:
        store.close()


def test_the_watcher_maps_a_sidecar_to_its_transcript(tmp_path: Path) -> None:
    home = make_home(tmp_path)
    roots = [home / ".claude"]
    meta = _meta(home)
    unit = claude_code.unit_for(str(meta), roots)
    assert unit is not None and unit.key == str(meta.with_name("agent-a0fix0001.jsonl"))
    orphan = meta.with_name("agent-gone.meta.json")
    orphan.write_bytes(b"{}")
    assert claude_code.unit_for(str(orphan), roots) is None  # no transcript: no unit


def _json_edit(**changes: object) -> Callable[[bytes], bytes]:
    return lambda data: orjson.dumps({**orjson.loads(data), **changes})


# Each source's sidecar in a test home, what an agent later writes into it, and the session
# field that must follow: the transcript beside it is left as it was.
SIDECARS = {
    "qwen-code": ("qwen/released/.qwen", "projects/*/subagents/*/*.meta.json",
                  _json_edit(status="failed"), ("task_status", "failed")),
    "kimi-cli": ("kimi/released/.kimi", "sessions/*/*/subagents/*/meta.json",
                 _json_edit(status="killed"), ("task_status", "aborted")),
    "kimi-cli:title": ("kimi/released/.kimi", "sessions/*/*/state.json",
                       _json_edit(title="Named later"), ("title", "Named later")),
    "droid": ("droid/home/.factory", "sessions/*/*.settings.json",
              _json_edit(model="claude-later"), ("metadata", "claude-later")),
    "copilot-cli": ("copilot/home/.copilot", "session-state/*/workspace.yaml",
                    lambda data: data.replace(b"name: Add a health check", b"name: Renamed"),
                    ("title", "Renamed")),
}  # fmt: skip


@pytest.mark.parametrize("case", list(SIDECARS))
def test_every_sidecar_written_after_the_log_is_read(tmp_path: Path, case: str) -> None:
    provider = case.split(":")[0]
    folder, pattern, edit, (field, expected) = SIDECARS[case]
    root = tmp_path / "root"
    shutil.copytree(DATA / folder, root)
    (sidecar,) = root.glob(pattern)
    unit = PARSERS[provider].unit_for(str(sidecar), [root])
    assert unit is not None and str(sidecar) in unit.info["beside"]
    store = SqliteStore(tmp_path / "l.db")
    try:
        options = SyncOptions(sources={provider: [root]})
        sync(store, options)
        sidecar.write_bytes(edit(sidecar.read_bytes()))
        assert sync(store, options).parsed == 1
        (row,) = [r for r in store.rows("sessions") if r["source_path"] == unit.key]
        assert expected in str(row[field])
        assert sync(store, options).parsed == 0
    finally:
        store.close()
