"""Pushing to a real gateway: `sync backfill --store http://…` from two machines at once gives the
ledger a local backfill of both gives, and a gateway killed mid-push or a pusher killed
mid-request loses and duplicates nothing."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.corpus.test_sessions_import_corpus import home_sources, tables
from tests.gateway.server import Gateway, make_token, push
from tracehouse.config import load_settings
from tracehouse.pipeline.options import SyncOptions
from tracehouse.pipeline.sync import sync
from tracehouse.redaction import redactor_for
from tracehouse.store import open_store

pytestmark = pytest.mark.corpus
HOMES = ("iansherr-claude-code-log", "a331468564-claude-codex-chat-archives")


def local_ledger(corpus: Path, tmp_path: Path) -> dict[str, list[dict]]:
    store = open_store(tmp_path / "local.db")
    # Redacted as the CLI redacts (the same key, in this test's data directory), as a push is.
    redactor = redactor_for(load_settings())
    for name in HOMES:
        options = SyncOptions(sources=home_sources(corpus / "homes" / name), redactor=redactor)
        assert sync(store, options).ok
    found = tables(store)
    store.close()
    return found


def ledger(path: Path) -> dict[str, list[dict]]:
    store = open_store(path)
    found = tables(store)
    store.close()
    return found


def finished(process, timeout: float = 120) -> str:  # type: ignore[no-untyped-def]
    out, err = process.communicate(timeout=timeout)
    assert process.returncode == 0, err.decode()
    return str(out.decode())


def test_two_machines_push_at_once_and_the_ledger_equals_a_local_backfill(
    corpus: Path, tmp_path: Path
) -> None:
    store = tmp_path / "gateway.db"
    tokens = [make_token(str(store), tmp_path, f"laptop-{i}", "push") for i in range(2)]
    gateway = Gateway(str(store), tmp_path / "gateway.log").start()
    try:
        pushers = [
            push(corpus / "homes" / home, gateway.url, token, f"machine-{i}", batch_sessions=5)
            for i, (home, token) in enumerate(zip(HOMES, tokens, strict=True))
        ]
        for pusher in pushers:
            finished(pusher)
        again = push(corpus / "homes" / HOMES[0], gateway.url, tokens[0], "machine-0", "--json")
        assert '"parsed": 0' in finished(again)  # its cursors were kept for it
    finally:
        gateway.stop()
    assert ledger(store) == local_ledger(corpus, tmp_path)
    hosts = {r["host"] for r in open_store(store).query("SELECT DISTINCT host FROM sessions")}
    assert hosts == {"laptop-0", "laptop-1"}  # the machines the tokens were issued for


def test_a_killed_gateway_and_a_killed_pusher_lose_and_duplicate_nothing(
    corpus: Path, tmp_path: Path
) -> None:
    store = tmp_path / "gateway.db"
    token = make_token(str(store), tmp_path, "laptop", "push")
    log = tmp_path / "gateway.log"
    gateway = Gateway(str(store), log).start()
    home = corpus / "homes" / HOMES[1]
    try:
        pusher = push(home, gateway.url, token, "laptop", batch_sessions=1)
        _wait_for(log, "POST /v1/sessions.import", count=3)
        assert pusher.poll() is None, "the push ended before the gateway could be killed"
        gateway.kill()  # mid-push: the pusher's retries wait for it to come back
        time.sleep(0.5)
        gateway = Gateway(str(store), log, port=gateway.port).start()
        finished(pusher)

        seen = log.read_text(errors="replace").count("POST /v1/sessions.import")
        pusher = push(corpus / "homes" / HOMES[0], gateway.url, token, "laptop", batch_sessions=1)
        _wait_for(log, "POST /v1/sessions.import", count=seen + 3)
        assert pusher.poll() is None, "the push ended before it could be killed"
        pusher.kill()  # mid-request, or between two
        pusher.wait()
        for name in HOMES:  # the rerun a cron would make
            finished(push(corpus / "homes" / name, gateway.url, token, "laptop"))
    finally:
        gateway.stop()
    assert ledger(store) == local_ledger(corpus, tmp_path)


def _wait_for(log: Path, text: str, count: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if log.exists() and log.read_text(errors="replace").count(text) >= count:
            return
        time.sleep(0.02)
    raise AssertionError(f"{text!r} not seen {count} times in {log}")
