"""Backfill on a temp home: re-runs write nothing, appends write only new rows, partial lines
wait, deleted sources keep their sessions, sources stay byte-identical."""

from __future__ import annotations

import orjson
import pytest

from tests.pipeline.helpers import backfill, main_file, make_home, snapshot, tree_state

# Every test here runs on both stores, through the `make_store` fixture.


def test_first_backfill_imports_sessions(tmp_path, make_store):
    home = make_home(tmp_path)
    store = make_store()
    report = backfill(store, home)
    assert report.ok
    assert report.statuses["imported"] == 3
    assert report.units == 5
    assert store.info().row_counts["sessions"] == 3


def test_a_rerun_opens_nothing_and_writes_nothing(tmp_path, make_store):
    home = make_home(tmp_path)
    store = make_store()
    backfill(store, home)
    before = snapshot(store)
    report = backfill(store, home)
    assert report.unchanged == report.units == 5
    assert report.parsed == 0 and report.bytes_read == 0 and report.rows_written == 0
    assert snapshot(store) == before


def test_a_full_rerun_rewrites_nothing(tmp_path, make_store):
    home = make_home(tmp_path)
    store = make_store()
    backfill(store, home)
    before = snapshot(store)
    report = backfill(store, home, full=True)
    assert report.statuses["skipped"] == 3 and report.rows_written == 0
    assert snapshot(store) == before


NEW_LINES = [
    {
        "type": "user",
        "uuid": "u9",
        "parentUuid": "u7",
        "sessionId": "s",
        "timestamp": "2026-03-01T11:00:00.000Z",
        "message": {"role": "user", "content": "one more"},
    },
    {
        "type": "assistant",
        "uuid": "a9",
        "parentUuid": "u9",
        "sessionId": "s",
        "requestId": "r9",
        "timestamp": "2026-03-01T11:00:01.000Z",
        "message": {
            "id": "msg_9",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": [{"type": "text", "text": "sure"}],
            "usage": {"input_tokens": 1, "output_tokens": 2},
        },
    },
]


def append(path, records, tail=b""):
    with path.open("ab") as f:
        for record in records:
            f.write(orjson.dumps(record) + b"\n")
        f.write(tail)


def test_appending_lines_writes_only_the_new_rows(tmp_path, make_store):
    home = make_home(tmp_path)
    store = make_store()
    backfill(store, home)
    before = snapshot(store)
    append(main_file(home), NEW_LINES)
    report = backfill(store, home)
    assert report.parsed == 1 and report.statuses["upserted"] == 1
    assert report.bytes_read == sum(len(orjson.dumps(r)) + 1 for r in NEW_LINES)
    after = snapshot(store)
    assert [m for m in after["messages"] if m not in before["messages"]] == [
        m for m in after["messages"] if m["content"] in ("one more", "sure")
    ]
    assert len(after["messages"]) == len(before["messages"]) + 2
    assert len(after["turns"]) == len(before["turns"]) + 1
    changed_turns = [t for t in before["turns"] if t not in after["turns"]]
    assert changed_turns == []
    # the session row (totals, counts) and the two messages and the new turn: nothing else
    assert report.rows_written == 4


def test_append_then_sync_equals_a_fresh_backfill_of_the_final_files(tmp_path, make_store):
    home = make_home(tmp_path)
    incremental = make_store()
    backfill(incremental, home)
    append(main_file(home), NEW_LINES[:1])
    backfill(incremental, home)
    append(main_file(home), NEW_LINES[1:])
    backfill(incremental, home)
    fresh = make_store()
    backfill(fresh, home)
    assert snapshot(incremental) == snapshot(fresh)


def test_lines_repeated_after_an_append_are_skipped_as_in_a_full_read(tmp_path, make_store):
    """A line written again with its uuid is a repeat; after an append the lines read before
    are no longer in hand, and counting them again made `message_count` exceed the rows."""
    home = make_home(tmp_path)
    incremental = make_store()
    backfill(incremental, home)
    lines = main_file(home).read_bytes().splitlines(keepends=True)
    with main_file(home).open("ab") as f:
        f.writelines(lines[-4:])
    backfill(incremental, home)
    fresh = make_store()
    backfill(fresh, home)
    assert snapshot(incremental) == snapshot(fresh)


def test_a_partial_line_is_imported_only_once_complete(tmp_path, make_store):
    home = make_home(tmp_path)
    store = make_store()
    backfill(store, home)
    line = orjson.dumps(NEW_LINES[0]) + b"\n"
    append(main_file(home), [], tail=line[:25])
    report = backfill(store, home)
    assert report.waiting == 1 and report.rows_written == 0
    assert not [m for m in store.rows("messages") if m["content"] == "one more"]
    append(main_file(home), [], tail=line[25:])
    report = backfill(store, home)
    assert [m["content"] for m in store.rows("messages") if m["content"] == "one more"]
    assert report.rows_written > 0


def test_a_deleted_source_keeps_its_session_and_is_flagged(tmp_path, make_store):
    home = make_home(tmp_path)
    store = make_store()
    backfill(store, home)
    messages = store.info().row_counts["messages"]
    saved = main_file(home).read_bytes()
    main_file(home).unlink()
    report = backfill(store, home)
    assert report.missing == 1
    session = next(s for s in store.rows("sessions") if s["source_path"] == str(main_file(home)))
    assert session["source_missing_at"] is not None
    assert store.info().row_counts["messages"] == messages
    assert backfill(store, home).missing == 0  # flagged once
    main_file(home).write_bytes(saved)
    backfill(store, home)
    session = next(s for s in store.rows("sessions") if s["source_path"] == str(main_file(home)))
    assert session["source_missing_at"] is None


def test_sources_are_never_written_to_or_beside(tmp_path, make_store):
    home = make_home(tmp_path)
    before = tree_state(home)
    store = make_store()
    backfill(store, home)
    backfill(store, home, full=True)
    assert tree_state(home) == before


def test_malformed_lines_are_rejects_and_the_rest_imports(tmp_path, make_store):
    home = make_home(tmp_path)
    append(main_file(home), NEW_LINES[:1], tail=b'{"type": "user", "broken\n')
    append(main_file(home), NEW_LINES[1:])
    store = make_store()
    report = backfill(store, home)
    assert not report.ok
    (reject,) = report.rejects
    assert reject.unit_key == str(main_file(home))
    lines = main_file(home).read_bytes().splitlines()
    assert reject.location.startswith(f"line {len(lines) - 1} ")
    assert [r["location"] for r in store.rows("rejects")] == [reject.location]
    assert any(m["content"] == "sure" for m in store.rows("messages"))


def test_import_order_does_not_matter(tmp_path, make_store):
    """A child subagent imported before its parent gives the same ledger."""
    home = make_home(tmp_path)
    project = home / ".claude" / "projects" / "-tmp-demo"
    children_first = make_store()
    backfill(children_first, home, full=False, batch_sessions=1)
    parent_last = make_store()
    sub = project / "11111111-1111-4111-8111-111111111111" / "subagents"
    hidden = tmp_path / "hidden"
    main_file(home).rename(hidden)
    backfill(parent_last, home)
    hidden.rename(main_file(home))
    backfill(parent_last, home)
    assert sub.exists()
    a, b = snapshot(children_first), snapshot(parent_last)
    assert a["sessions"] == b["sessions"]
    assert a["tool_calls"] == b["tool_calls"]


def test_worker_processes_give_the_same_ledger_as_an_inline_run(tmp_path, make_store):
    home = make_home(tmp_path, copies=4)
    inline = make_store()
    backfill(inline, home, workers=1)
    shared = make_store()
    # Three processes: two parsers sending to this one, which writes.
    report = backfill(shared, home, workers=3, pool_min_bytes=0, batch_sessions=3)
    assert report.ok and report.parsed == report.units == 20
    assert report.statuses["imported"] == 12
    assert snapshot(shared) == snapshot(inline)
    assert backfill(shared, home, workers=2, pool_min_bytes=0).unchanged == 20


def test_who_writes_depends_on_whether_the_store_takes_writes_side_by_side(tmp_path, make_store):
    """On SQLite the parser processes never open the store: each batch they send is committed
    here (so the per-batch hook runs in this process). PostgreSQL takes writes side by side:
    every worker writes its own batches, and the hook, which does not travel, never runs."""
    store = make_store()
    committed: list[int] = []
    report = backfill(
        store,
        make_home(tmp_path, copies=4),
        workers=2,
        pool_min_bytes=0,
        batch_sessions=1,
        on_batch=committed.append,
    )
    assert report.ok and report.statuses["imported"] == 12 and report.batches >= 12
    if store.concurrent_writes:
        assert committed == []
    else:
        assert committed[-1] == report.batches and committed == sorted(committed)


def test_workers_reopen_a_postgresql_ledger_by_its_dsn_password_and_all(
    tmp_path, pg_schemas, monkeypatch
):
    """PostgreSQL takes writes side by side, so every worker parses and writes, opening the
    store again from its address: the DSN as given, not the masked one (the test server
    trusts any password, so the address handed over is checked here)."""
    from tracehouse.pipeline import workers as workers_module
    from tracehouse.store import open_store

    dsn = pg_schemas()
    if "postgres@" not in dsn:
        pytest.skip("needs the default passwordless DSN to add a password to")
    store = open_store(dsn.replace("postgres@", "postgres:any-Password@", 1))
    assert "any-Password" not in store.location
    handed = []
    real = workers_module.run_in_workers
    monkeypatch.setattr(
        workers_module,
        "run_in_workers",
        lambda store, *args: handed.append(store.address) or real(store, *args),
    )
    report = backfill(store, make_home(tmp_path, copies=2), workers=2, pool_min_bytes=0)
    assert report.ok and report.statuses["imported"] == 6
    assert handed == [store.address] and "any-Password" in handed[0]
    store.close()


def test_context_messages_leave_out_host_notices(tmp_path, make_store):
    from tracehouse.model import ids
    from tracehouse.store.reads import context_messages

    store = make_store()
    backfill(store, make_home(tmp_path))
    session = ids.session_id("claude-code", "11111111-1111-4111-8111-111111111111")
    every = [m for m in store.rows("messages") if m["session_id"] == session]
    sent = context_messages(store, session)
    assert {m["message_type"] for m in sent} == {"user", "assistant", "tool_result", "system"}
    hosts = [m for m in every if m["message_type"] == "host"]
    # interrupt, API error, compaction boundary, synthetic reply, local command echo
    assert len(hosts) == 5 and len(sent) == len(every) - len(hosts)
    assert [m["seq"] for m in sent] == sorted(m["seq"] for m in sent)


def test_a_stop_mid_group_commits_what_is_written_and_a_rerun_reads_the_rest(tmp_path):
    """SQLite's writer asks `stop` before each batch of a group: a stop (SIGTERM in live mode)
    commits the batches in hand, not the rest of a group, and the next run reads the rest."""
    import itertools

    from tracehouse.store.sqlite.store import SqliteStore

    home = make_home(tmp_path, copies=4)
    store = SqliteStore(tmp_path / "stopped.db")
    asked = itertools.count()
    options = {"workers": 2, "pool_min_bytes": 0, "batch_sessions": 1}
    backfill(store, home, stop=lambda: next(asked) >= 3, **options)
    assert 0 < store.info().row_counts["sessions"] < 12
    assert backfill(store, home, **options).ok
    clean = SqliteStore(tmp_path / "clean.db")
    backfill(clean, home)
    assert snapshot(store) == snapshot(clean)
    store.close()
    clean.close()
