"""Import order never changes the ledger (DESIGN's invariant; issue #13, item 5): a prompt
history before its transcript, a child before its parent, every unit alone in any order."""

from __future__ import annotations

import random
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import DATA
from tests.store.factory import WHEN
from tracehouse.parsers.codex.discover import discover
from tracehouse.pipeline.options import SyncOptions, Targets
from tracehouse.pipeline.sync import sync

CODEX_HOME = DATA / "codex" / "home"
COPIED_HOME = DATA / "codex" / "copied"
TABLES = ("sessions", "turns", "messages", "tool_calls", "message_sources")


def ledger(store: Any) -> dict[str, list[dict[str, Any]]]:
    return {
        t: [{k: v for k, v in r.items() if k not in WHEN} for r in store.rows(t)] for t in TABLES
    }


def backfill(store: Any, codex: Path, units: list[Any] | None = None) -> None:
    targets = None if units is None else Targets({"codex": units})
    sync(store, SyncOptions(sources={"codex": [codex]}), targets=targets)


def test_a_history_read_before_its_transcripts_leaves_no_duplicate_prompt(make_store, tmp_path):
    clean = make_store()
    backfill(clean, CODEX_HOME / ".codex")
    codex = tmp_path / ".codex"
    codex.mkdir()
    shutil.copy(CODEX_HOME / ".codex" / "history.jsonl", codex)  # the transcripts not yet there
    store = make_store()
    backfill(store, codex)
    recovered = store.query("SELECT count(*) AS n FROM messages")[0]["n"]
    assert recovered > 0
    shutil.rmtree(codex)
    shutil.copytree(CODEX_HOME / ".codex", codex)
    backfill(store, codex)
    got, want = ledger(store), ledger(clean)
    for table in TABLES:  # paths differ (another home); compare everything else
        strip = lambda rows: sorted(  # noqa: E731
            repr({k: v for k, v in r.items() if k not in ("source_path", "source_ref")})
            for r in rows
        )
        assert strip(got[table]) == strip(want[table]), table


def test_every_unit_alone_in_any_order_gives_the_same_ledger(make_store):
    codex = CODEX_HOME / ".codex"
    clean = make_store()
    backfill(clean, codex)
    units = discover([codex])
    rng = random.Random(13)
    for order in (list(reversed(units)), rng.sample(units, len(units))):
        store = make_store()
        try:
            for unit in order:
                backfill(store, codex, [unit])
            assert ledger(store) == ledger(clean), [u.key.rsplit("/", 1)[-1] for u in order]
        finally:
            store.close()


LINKS = {
    "sessions": ("session_id", "parent_session_id", "parent_message_id", "spawn_tool_call_id"),
    "tool_calls": ("tool_call_id", "spawned_session_id"),
}


def links(store: Any) -> dict[str, list[tuple[Any, ...]]]:
    return {
        t: sorted(tuple(r[c] for c in cols) for r in store.rows(t)) for t, cols in LINKS.items()
    }


def _push(
    dsn: str,
    roots: dict[str, list[Path]],
    share: list[tuple[str, Any]],
    steps: int,
    barrier: Any,
    errors: list[BaseException],
) -> None:
    """One writer: its units one by one, each started with every other writer's."""
    from tracehouse.store import open_store

    store = open_store(dsn)
    try:
        for provider, unit in share:
            barrier.wait(timeout=30)
            targets = Targets({provider: [unit]})
            sync(store, SyncOptions(sources={provider: roots[provider]}), targets=targets)
        for _ in range(steps - len(share)):
            barrier.wait(timeout=30)  # keep step with the writers that have more
    except BaseException as exc:
        errors.append(exc)
        barrier.abort()
    finally:
        store.close()


@pytest.mark.slow
def test_parents_and_children_pushed_at_once_still_link(pg_schemas, tmp_path):
    """Four writers commit interleaved parents and children at the same moment, ten rounds:
    every link is resolved as a sequential run resolves it (PostgreSQL, READ COMMITTED)."""
    import threading

    from tracehouse.parsers.registry import PARSERS
    from tracehouse.store import open_store

    roots = {
        "claude-code": [DATA / "claude" / "home" / ".claude"],
        "codex": [CODEX_HOME / ".codex"],
    }
    units = [(p, u) for p, r in roots.items() for u in PARSERS[p].discover(r)]
    reference = open_store(str(tmp_path / "reference.db"))
    sync(reference, SyncOptions(sources=roots))
    expected = links(reference)
    reference.close()
    assert any(row[1] for row in expected["sessions"]), "the fixtures must have lineage"

    writers = 4
    for round_number in range(10):
        order = random.Random(round_number).sample(units, len(units))
        shares = [order[i::writers] for i in range(writers)]
        dsn = pg_schemas()
        open_store(dsn).close()  # migrate once, before the race
        barrier = threading.Barrier(writers)
        errors: list[BaseException] = []

        steps = len(units) // writers + 1
        threads = [
            threading.Thread(target=_push, args=(dsn, roots, share, steps, barrier, errors))
            for share in shares
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, (round_number, errors)
        store = open_store(dsn)
        try:
            assert links(store) == expected, f"round {round_number}"
        finally:
            store.close()
