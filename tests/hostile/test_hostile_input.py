"""Hostile input never stops a run (issue #13, items 1–2): each bad line or value is one reject
naming its file and line or key; everything else imports as a clean run would."""

from __future__ import annotations

import os
import random
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import DATA
from tests.hostile.trial import backfill, baseline_of, run_trial, targets
from tests.sources.cursor_dbs import bubble, make_user_dir, new_db, put, split

CLAUDE_HOME = DATA / "claude" / "home"
CODEX_HOME = DATA / "codex" / "home"
EXAMPLES = int(os.environ.get("TRACEHOUSE_FUZZ_EXAMPLES", "30"))


@pytest.fixture(scope="module")
def homes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The fresh-clone homes (Claude, Codex, a Cursor user dir), each with its clean baseline."""
    root = tmp_path_factory.mktemp("hostile")
    cursor_home = root / "cursor-home"
    make_user_dir(cursor_home)
    pool = []
    baselines = {}
    for home in (CLAUDE_HOME, CODEX_HOME, cursor_home):
        for provider, path in targets(home):
            pool.append((home, provider, path))
            if (home, provider) not in baselines:
                baselines[(home, provider)] = baseline_of(home, root / "baseline", provider)
    return {"pool": pool, "baselines": baselines, "work": root / "trial"}


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(pick=st.integers(min_value=0), seed=st.integers(min_value=0, max_value=2**32))
def test_a_mutated_line_or_value_is_a_located_reject_and_loses_nothing_else(
    homes: dict[str, Any], pick: int, seed: int
) -> None:
    home, provider, path = homes["pool"][pick % len(homes["pool"])]
    outcome = run_trial(
        home,
        homes["work"],
        provider,
        path,
        random.Random(seed),
        homes["baselines"][(home, provider)],
    )
    where = f"{outcome.target}: {outcome.mutation}"
    assert outcome.crash is None, f"{where}\n{outcome.crash}"
    assert not outcome.hang, where
    assert not outcome.unlocated, f"{where}: {outcome.unlocated}"
    assert not outcome.lost, f"{where}: sessions of other files changed: {outcome.lost}"


def _claude_home_with(tmp_path: Path, line: bytes) -> tuple[Path, Path]:
    home = tmp_path / "home"
    shutil.copytree(CLAUDE_HOME, home)
    main = next((home / ".claude" / "projects" / "-tmp-demo").glob("1111*.jsonl"))
    lines = main.read_bytes().split(b"\n")
    lines.insert(3, line)
    main.write_bytes(b"\n".join(lines))
    return home, main


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (b'{"type":"user","n":NaN}', "NaN is not a JSON number"),
        (b'{"type":"user","n":-Infinity}', "Infinity is not a JSON number"),
        (b'{"type":"user","deep":' + b"[" * 300 + b"]" * 300 + b"}", "nested deeper than"),
        (b'{"type":"user","deep":' + b"[" * 5000 + b"]" * 5000 + b"}", "nested too deep"),
        (
            b'{"type":"assistant","uuid":"u-big","sessionId":"11111111-1111-4111-8111-111111111111",'
            b'"timestamp":"2026-01-01T00:00:09.000Z","message":{"id":"msg_big","role":"assistant",'
            b'"model":"m","content":[{"type":"text","text":"x"}],'
            b'"usage":{"input_tokens":9223372036854775808,"output_tokens":1}}}',
            "is not a token count",
        ),
    ],
    ids=["nan", "infinity", "deep-300", "deep-5000", "int-past-int64"],
)
def test_one_bad_line_is_one_reject_and_the_session_still_imports(
    tmp_path: Path, line: bytes, reason: str
) -> None:
    home, main = _claude_home_with(tmp_path, line)
    report, ledger = backfill(home, tmp_path / "ledger.db", "claude-code")
    assert [(r.unit_key, r.location.split(" (")[0]) for r in report.rejects] == [
        (str(main), "line 4")
    ]
    assert reason in report.rejects[0].reason
    _clean, clean_ledger = backfill(CLAUDE_HOME, tmp_path / "clean.db", "claude-code")
    assert len(ledger) == len(clean_ledger)
    assert sum(map(len, ledger.values())) == sum(map(len, clean_ledger.values()))


def test_a_symlink_loop_named_like_a_transcript_is_a_reject(tmp_path: Path) -> None:
    home = tmp_path / "home"
    shutil.copytree(CLAUDE_HOME, home)
    project = home / ".claude" / "projects" / "-tmp-demo"
    (project / "loop.jsonl").symlink_to("loop.jsonl")
    (project / "self").symlink_to(".")
    report, ledger = backfill(home, tmp_path / "ledger.db", "claude-code")
    assert [(r.unit_key, r.location) for r in report.rejects] == [
        (str(project / "loop.jsonl"), "file")
    ]
    assert "symbolic links" in report.rejects[0].reason
    assert ledger


def test_a_directory_that_cannot_be_listed_is_named_and_its_files_not_flagged_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    shutil.copytree(CLAUDE_HOME, home)
    project = str(home / ".claude" / "projects" / "-tmp-demo")
    from tracehouse.store import open_store

    backfill(home, tmp_path / "ledger.db", "claude-code")
    real = os.scandir

    def scandir(path: Any) -> Any:
        if str(path) == project:  # what a directory without read permission does (not as root)
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    report, _ledger = backfill(home, tmp_path / "ledger.db", "claude-code")
    assert [(r.unit_key, r.location) for r in report.rejects] == [(project, "directory")]
    assert "Permission denied" in report.rejects[0].reason
    store = open_store(str(tmp_path / "ledger.db"))
    try:
        assert not [s for s in store.rows("sessions") if s["source_missing_at"]]
    finally:
        store.close()


def _cursor_user(tmp_path: Path) -> tuple[Path, Path]:
    user = tmp_path / "home" / ".config" / "Cursor" / "User"
    path = user / "globalStorage" / "state.vscdb"
    conn = new_db(path)
    for n in range(3):
        split(conn, f"c{n}", 10, [bubble(f"b{n}1", 1, f"hello {n}"), bubble(f"b{n}2", 2, "hi")])
    conn.close()
    return tmp_path / "home", path


def _messages_by_composer(ledger: dict[Any, Any]) -> dict[str, int]:
    return {sid: sum(1 for t, _ in rows if t == "messages") for (_, sid), rows in ledger.items()}


def test_invalid_utf8_in_one_cursor_bubble_keeps_every_composer(tmp_path: Path) -> None:
    home, path = _cursor_user(tmp_path)
    conn = sqlite3.connect(path)
    conn.execute(
        "UPDATE cursorDiskKV SET value = CAST(? AS TEXT) WHERE key = 'bubbleId:c1:b11'",
        (b'{"_v":3,"bubbleId":"b11","type":1,"text":"caf\xe9 \xff"}',),
    )
    conn.commit()
    conn.close()
    report, ledger = backfill(home, tmp_path / "ledger.db", "cursor")
    assert report.rejects == []
    assert _messages_by_composer(ledger) == {"c0": 2, "c1": 2, "c2": 2}
    texts = [dict(row)["content"] for (_, sid), rows in ledger.items() for t, row in rows
             if sid == "c1" and t == "messages"]  # fmt: skip
    assert "caf\ufffd \ufffd" in texts


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("composerData:c1", {"composerId": "c1", "_v": 10, "fullConversationHeadersOnly": 5}),
        ("composerData:c1", {"composerId": "c1", "_v": 10, "conversation": "text"}),
        ("bubbleId:c1:b11", {"bubbleId": "b11", "type": 1, "tokenCount": {"inputTokens": 2**64}}),
        ("bubbleId:c1:b11", {"bubbleId": "b11", "type": 1, "timingInfo": [1, 2]}),
        ("bubbleId:c1:b11", [1, 2, 3]),
    ],
    ids=["headers-int", "conversation-str", "tokens-past-int64", "timing-list", "bubble-list"],
)
def test_a_wrong_typed_cursor_value_is_a_reject_for_its_key_alone(
    tmp_path: Path, key: str, value: Any
) -> None:
    home, path = _cursor_user(tmp_path)
    conn = sqlite3.connect(path)
    put(conn, "cursorDiskKV", key, value)
    put(conn, "cursorDiskKV", 7, "{}")  # an integer key, as a buggy writer could leave
    put(conn, "cursorDiskKV", "bubbleId:c2:b99", None)
    conn.commit()
    conn.close()
    report, ledger = backfill(home, tmp_path / "ledger.db", "cursor")
    counts = _messages_by_composer(ledger)
    assert counts["c0"] == 2 and counts["c2"] == 2  # the other composers are whole
    assert all(r.location.startswith(("composerData:c1", "bubbleId:c1")) for r in report.rejects)
