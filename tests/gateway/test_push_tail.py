"""A pusher's second run sends only what was appended: its new rows link to rows it pushed
before (a turn's parent, a tool result's turn), by ledger id. The gateway's ledger must equal a
local store's that read the same file twice, and refuse a link into another session."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import orjson
import pytest

from tests.corpus.test_sessions_import_corpus import home_sources, tables
from tests.gateway.appends import DATA, append_a_turn
from tests.gateway.server import Gateway, make_token, push
from tracehouse.config import load_settings
from tracehouse.errors import RequestError
from tracehouse.model import push_wire
from tracehouse.pipeline.options import SyncOptions
from tracehouse.pipeline.sync import sync
from tracehouse.redaction import redactor_for
from tracehouse.store import open_store


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_an_appended_tail_pushes_like_a_local_sync(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    home = tmp_path / "home"
    shutil.copytree(DATA / "claude" / "home", home)
    shutil.copytree(DATA / "codex" / "home" / ".codex", home / ".codex")
    local = open_store(tmp_path / "local.db")
    if backend == "postgresql":  # pooled connections that did not migrate write too
        gateway_db: str | Path = request.getfixturevalue("pg_schemas")()
    else:
        gateway_db = tmp_path / "gateway.db"
    token = make_token(str(gateway_db), tmp_path, "laptop", "push")
    gateway = Gateway(str(gateway_db), tmp_path / "gateway.log").start()
    try:
        for step in ("first", "appended"):
            if step == "appended":
                append_a_turn(home)
            redactor = redactor_for(load_settings())  # as the pushing CLI redacts
            options = SyncOptions(sources=home_sources(home), workers=0, redactor=redactor)
            assert sync(local, options).ok
            pusher = push(home, gateway.url, token, "laptop", "--json")
            out, err = pusher.communicate(timeout=120)
            assert pusher.returncode == 0, err.decode()
        assert '"parsed": 1' in out.decode()  # only the appended file was read again
    finally:
        gateway.stop()
    log = (tmp_path / "gateway.log").read_text()
    assert re.search(r'"POST /v1/sessions.import" 200 [0-9.]+ ms [0-9,]+ B in [1-9][0-9,]* B out',
                     log), log  # fmt: skip
    # a GET receives nothing and says what it sent, not "0 B" (issue #70)
    assert re.search(r'"GET /v1/health" 200 [0-9.]+ ms 0 B in [1-9][0-9,]* B out', log), log
    assert token.read_text().strip() not in log
    pushed = open_store(gateway_db)
    request.addfinalizer(pushed.close)
    parents = pushed.query(
        "SELECT t.parent_turn_id FROM turns t JOIN turns p ON p.turn_id = t.parent_turn_id"
    )
    assert parents, "the tail's turn lost its parent"
    assert tables(pushed) == tables(local)


def _item(linked: str) -> dict:
    turn = {"sourceTurnId": "t2", "ledgerLinks": {"parentSourceTurnId": linked}}
    return {"sourceProvider": "claude-code", "sourceSessionId": "mine", "turns": [turn]}


def test_a_link_by_ledger_id_into_another_session_is_refused() -> None:
    item = _item("theirs")
    request = orjson.dumps({"mode": "tail", "items": [item]})
    with pytest.raises(RequestError, match="is not a turn of session"):
        push_wire.decode_push(request, "laptop", lambda target, ids: {"theirs": "other-session"})
    batch = push_wire.decode_push(request, "laptop", lambda target, ids: {})  # not stored: kept
    assert batch.tuples("turns")


def test_a_plain_import_does_not_take_ledger_links() -> None:
    from tracehouse.model import codec

    batch = codec.decode_request(orjson.dumps({"items": [_item("x")]}))
    assert batch.invalid and "ledgerLinks: unknown field" in (batch.invalid[0].reason or "")
