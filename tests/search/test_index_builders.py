"""A first load's two large search indexes built beside the writer (`sqlite_builders`) and adopted
when the run finishes.

The oracle is the same load written with the writer indexing as it goes: every index must then
hold the same terms at the same rows, columns and offsets (FTS5's own vocabulary of instances),
whatever the load rewrote, deleted or rolled back on the way. And whatever goes wrong (another
writer, a builder that dies, a run killed midway), the index is whole again by the end of that
run or at the start of the next."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, given, settings

from tests.store.factory import batch, item
from tracehouse.model.contract import ImportBatch
from tracehouse.search import sqlite_builders, sqlite_index
from tracehouse.search.hits import SearchFilters
from tracehouse.store.protocol import RunTotals
from tracehouse.store.sqlite.store import SqliteStore

WORDS = ("alpha", "bravo", "charlie", "delta", "聊天记录")
SIDS = ("s1", "s2", "s3")


def session(sid: str, words: str, result: str = "ok", *, recovered: bool = False) -> dict[str, Any]:
    """A session whose messages, thinking-free, say `words`, and whose call returned `result`;
    `recovered`: rebuilt from a prompt history, so that its transcript arriving later deletes
    its recovered rows."""
    found = item(sid, 3, text=words)
    found["toolCalls"][0]["resultJson"] = result
    if recovered:
        found["session"]["metadata"] = {"recovered_from": "history"}
        for message in found["messages"]:
            message["metadataJson"] = {"recovered_from": "history"}
    return found


def load(path: Path | str, groups: list[list[ImportBatch]], *, builders: bool) -> dict[str, float]:
    """One run of group imports into a new ledger; the store's timings."""
    store = SqliteStore(path)
    try:
        store.start_run("run", "backfill")
        for group in groups:
            with store.import_group(builders=builders) as write:
                for each in group:
                    assert write(each).ok
        store.finish_run("run", RunTotals())
        return dict(store.timings)
    finally:
        store.close()


def indexed(path: Path | str, *, by_key: bool = False) -> dict[str, Any]:
    """What each index holds, term by term, and its mark; FTS5's structural check passes first
    (the check against the content tables cannot hold where unspaced scripts are indexed split
    into characters). `by_key`: each row named by its key, not its rowid, and no marks (runs
    whose rows came in another order)."""
    conn = sqlite3.connect(path)
    try:
        out: dict[str, Any] = {}
        if not by_key:
            out["marks"] = conn.execute("SELECT * FROM search_marks ORDER BY 1").fetchall()
        for index in sqlite_index.INDEXES:
            name = index.name
            conn.execute(f"INSERT INTO {name} ({name}, rank) VALUES ('integrity-check', 0)")
            conn.execute(
                f"CREATE VIRTUAL TABLE temp.v_{name} USING fts5vocab(main, {name}, instance)"
            )
            row = f"(SELECT {index.key} FROM {index.table} WHERE rowid = doc)" if by_key else "doc"
            out[name] = sorted(
                conn.execute(f"SELECT term, {row}, col, offset FROM temp.v_{name}").fetchall()
            )
        return out
    finally:
        conn.close()


def both(
    tmp_path: Path, groups: list[list[ImportBatch]]
) -> tuple[dict[str, Any], dict[str, Any], dict[str, float]]:
    built, inline = tmp_path / f"built-{id(groups)}.db", tmp_path / f"inline-{id(groups)}.db"
    timings = load(built, groups, builders=True)
    load(inline, groups, builders=False)
    return indexed(built), indexed(inline), timings


def test_a_first_load_built_beside_the_writer_holds_what_the_writer_would_have_indexed(
    tmp_path: Path,
):
    groups = [
        [batch([session("s1", "alpha bravo"), session("s2", "聊天记录 charlie")])],
        # s1 again with other text (its rows are rewritten), s3 recovered from a history
        [batch([session("s1", "delta", "done"), session("s3", "bravo", recovered=True)])],
        [batch([session("s3", "charlie")])],  # its transcript: the recovered rows are deleted
    ]
    built, inline, timings = both(tmp_path, groups)
    assert built == inline
    assert timings["build"] > 0  # the builders indexed it, and their index was adopted
    assert built["messages_fts"] and built["tool_calls_fts"]


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    groups=st.lists(
        st.lists(
            st.lists(
                st.tuples(
                    st.sampled_from(SIDS),
                    st.sampled_from(WORDS),
                    st.sampled_from(("ok", "done", "failed twice")),
                    st.booleans(),
                ),
                min_size=1,
                max_size=3,
            ),
            min_size=1,
            max_size=3,
        ),
        min_size=1,
        max_size=3,
    )
)
def test_any_first_load_adopted_equals_the_writers_own_index(tmp_path: Path, groups) -> None:  # type: ignore[no-untyped-def]
    batches = [
        [
            batch([session(sid, words, result, recovered=r) for sid, words, result, r in sessions])
            for sessions in group
        ]
        for group in groups
    ]
    built, inline, _ = both(tmp_path, batches)
    assert built == inline


def test_a_group_rolled_back_is_rolled_back_in_the_builders_too(tmp_path: Path):
    def run(path: Path, builders: bool) -> None:
        store = SqliteStore(path)
        store.start_run("run", "backfill")
        with store.import_group(builders=builders) as write:
            write(batch([session("s1", "alpha")]))
        with pytest.raises(RuntimeError), store.import_group(builders=builders) as write:
            write(batch([session("s1", "bravo"), session("s2", "charlie")]))
            raise RuntimeError("a parser failed")  # the group's transaction rolls back
        with store.import_group(builders=builders) as write:
            write(batch([session("s3", "delta")]))
        store.finish_run("run", RunTotals())
        assert builders is ("build" in store.timings)
        store.close()

    run(tmp_path / "built.db", True)
    run(tmp_path / "inline.db", False)
    assert indexed(tmp_path / "built.db") == indexed(tmp_path / "inline.db")
    store = SqliteStore(tmp_path / "built.db")
    assert {h.label for h in store.search("bravo", SearchFilters())} == set()
    assert {h.label for h in store.search("alpha", SearchFilters())} == {"cc-s1"}
    store.close()


def test_another_writer_meanwhile_lets_the_builders_go_and_the_writer_indexes_it_all(
    tmp_path: Path,
):
    path = tmp_path / "built.db"
    store = SqliteStore(path)
    store.start_run("run", "backfill")
    with store.import_group(builders=True) as write:
        write(batch([session("s1", "alpha")]))
    with sqlite3.connect(path) as other:  # its commit did not go through the builders
        other.execute("INSERT INTO export_marks VALUES ('t', 'md', '2026-01-01', 1)")
    with store.import_group(builders=True) as write:
        write(batch([session("s2", "bravo")]))
    store.finish_run("run", RunTotals())
    assert "build" not in store.timings
    store.close()
    load(
        tmp_path / "inline.db",
        [[batch([session("s1", "alpha")])], [batch([session("s2", "bravo")])]],
        builders=False,
    )
    assert indexed(path) == indexed(tmp_path / "inline.db")


def test_a_builder_that_dies_is_let_go_and_the_index_is_whole_at_the_end(tmp_path: Path):
    path = tmp_path / "built.db"
    store = SqliteStore(path)
    store.start_run("run", "backfill")
    with store.import_group(builders=True) as write:
        write(batch([session("s1", "alpha")]))
    builders = store._builders
    assert builders is not None
    victim = builders._processes["tool_calls_fts"]
    os.kill(victim.pid, signal.SIGKILL)
    victim.join(timeout=10)
    with store.import_group(builders=True) as write:
        write(batch([session("s2", "bravo")]))
    store.finish_run("run", RunTotals())
    assert store._builders is None and "build" not in store.timings
    store.close()
    assert not list(tmp_path.glob("tracehouse-scratch-*"))  # its databases are gone with it
    load(
        tmp_path / "inline.db",
        [[batch([session("s1", "alpha")])], [batch([session("s2", "bravo")])]],
        builders=False,
    )
    assert indexed(path) == indexed(tmp_path / "inline.db")


KILLED = textwrap.dedent(
    """
    import os, signal, sys
    from tests.search.test_index_builders import session
    from tests.store.factory import batch
    from tracehouse.store.sqlite.store import SqliteStore

    store = SqliteStore(sys.argv[1])
    store.start_run("run", "backfill")
    with store.import_group(builders=True) as write:
        write(batch([session("s1", "alpha"), session("s2", "聊天记录")]))
    os.kill(os.getpid(), signal.SIGKILL)  # committed, never finished: nothing adopted
    """
)


def test_a_run_killed_before_it_adopted_its_indexes_leaves_a_ledger_the_next_run_indexes(
    tmp_path: Path,
):
    path = tmp_path / "built.db"
    done = subprocess.run(
        [sys.executable, "-c", KILLED, str(path)], cwd=Path(__file__).parents[2], timeout=120
    )
    assert done.returncode == -signal.SIGKILL
    assert list(tmp_path.glob("tracehouse-scratch-*"))  # its builders' databases, left behind
    store = SqliteStore(path)
    try:
        assert sqlite_index.unindexed(store.conn)  # rows the ledger's own index does not hold
        assert store.search_lag() > 0 and store.search("alpha", SearchFilters()) == []
        store.start_run("next", "backfill")
        assert sqlite_index.unindexed(store.conn) == store.search_lag() == 0
        assert {h.label for h in store.search("alpha", SearchFilters())} == {"cc-s1"}
        assert not list(tmp_path.glob("tracehouse-scratch-*"))
        assert store.timings["adopt"] > 0  # booked apart from any import's writing
    finally:
        store.close()
    load(
        tmp_path / "inline.db",
        [[batch([session("s1", "alpha"), session("s2", "聊天记录")])]],
        builders=False,
    )
    assert indexed(path) == indexed(tmp_path / "inline.db")


def test_a_ledger_that_holds_rows_is_never_built_beside_the_writer(tmp_path: Path):
    path = tmp_path / "l.db"
    load(path, [[batch([session("s1", "alpha")])]], builders=False)
    store = SqliteStore(path)
    try:
        assert not sqlite_builders.buildable(store.conn, sqlite_index.BY_NAME["messages_fts"])
        store.start_run("run", "backfill")
        with store.import_group(builders=True) as write:
            write(batch([session("s2", "bravo")]))
        assert store._builders is None  # not a first load: the writer indexes as it goes
        store.finish_run("run", RunTotals())
    finally:
        store.close()


def test_builders_that_cannot_start_leave_the_writer_to_index_as_it_goes(tmp_path, monkeypatch):
    def refuse(self: Any) -> None:
        raise RuntimeError("no process to be had")

    monkeypatch.setattr("multiprocessing.process.BaseProcess.start", refuse)
    path = tmp_path / "built.db"
    groups = [[batch([session("s1", "alpha"), session("s2", "bravo")])]]
    assert "build" not in load(path, groups, builders=True)
    assert not list(tmp_path.glob("tracehouse-scratch-*"))
    load(tmp_path / "inline.db", groups, builders=False)
    assert indexed(path) == indexed(tmp_path / "inline.db")


SPAWNED = textwrap.dedent(
    """
    import sys, threading
    from tests.search.test_index_builders import batch, indexed, load, session
    from tracehouse.processes import start_method

    if __name__ == "__main__":
        threading.Thread(target=threading.Event().wait, daemon=True).start()  # as `sync live`
        assert start_method() == "spawn"
        groups = [[batch([session("s1", "alpha"), session("s2", "聊天记录")])]]
        timings = load(sys.argv[1] + "/built.db", groups, builders=True)
        load(sys.argv[1] + "/inline.db", groups, builders=False)
        same = indexed(sys.argv[1] + "/built.db") == indexed(sys.argv[1] + "/inline.db")
        print("build" in timings, same)
    """
)


def test_builders_spawned_by_a_writer_that_runs_threads_index_what_forked_ones_do(tmp_path: Path):
    script = tmp_path / "spawned.py"
    script.write_text(SPAWNED)
    done = subprocess.run(
        [sys.executable, str(script), str(tmp_path)],
        cwd=Path(__file__).parents[2],
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["True", "True"]  # built by spawned builders, and alike
