"""`store.search` on both backends, over a ledger of every source's tests/data fixtures: hits
equal a brute-force scan of the same rows, filters narrow them, the index follows appends and
deletes in the rows' own transactions, and an unchanged re-run does not touch it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import DATA
from tests.sources.cursor_dbs import make_user_dir
from tests.store.factory import batch, item
from tracehouse.pipeline.options import SyncOptions
from tracehouse.pipeline.sync import sync
from tracehouse.reports.filters import build_search_filters
from tracehouse.search import sqlite_index
from tracehouse.search.hits import MARK, SearchFilters
from tracehouse.search.query import matches, parse
from tracehouse.store import open_store
from tracehouse.store.protocol import SessionStore

QUERIES = [
    "app.py",  # a path: the phrase of its words
    "division",
    "zero",
    '"missing import"',
    "tests OR docs",
    "pytest -fixture",
    "explor*",
    "rotate_key",  # nothing has it
    "the -app",
    "ZeroDivisionError",
    "list_dir",
    "relative_workspace_path",
    "files OR file -src",
]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    shutil.copytree(DATA / "claude" / "home", home)
    shutil.copytree(DATA / "codex" / "home" / ".codex", home / ".codex")
    make_user_dir(home)
    return home


def backfill(store: SessionStore, home: Path):  # type: ignore[no-untyped-def]
    sources = {
        "claude-code": [home / ".claude"],
        "codex": [home / ".codex"],
        "cursor": [home / ".config" / "Cursor" / "User"],
    }
    return sync(store, SyncOptions(sources=sources, workers=0))


def brute_force(store: SessionStore, text: str, filters: SearchFilters) -> set[tuple[str, str]]:
    """(kind, id) of every row the query matches, found by reading every row."""
    query = parse(text)

    def hit(*fields: str | None) -> bool:
        # a word or phrase is found within one field, as the index sees each column
        return all(any(any(_has(t, f) for f in fields) for t in g) for g in query.groups) and (
            not any(_has(t, f) for t in query.excluded for f in fields)
        )

    found = set()
    for m in store.rows("messages"):
        kind = m["message_type"]  # a tool result is found on its call, not twice
        if kind != "tool_result" and hit(m["content"]) and filters.wants(kind):
            found.add((kind, m["message_id"]))
        if hit(m["thinking"]) and filters.wants("thinking"):
            found.add(("thinking", m["message_id"]))
    for c in store.rows("tool_calls"):
        params = c["params"] if isinstance(c["params"], str) or c["params"] is None else None
        if params is None:  # PostgreSQL hands JSON back decoded: compare with its text
            (row,) = store.query(
                "SELECT params::text AS p FROM tool_calls WHERE tool_call_id = ?",
                [c["tool_call_id"]],
            )
            params = row["p"]
        if hit(c["tool_name"], params, c["result"], c["error"]) and filters.wants("tool"):
            found.add(("tool", c["tool_call_id"]))
    for s in store.rows("sessions"):
        if hit(s["title"], s["task_description"]) and filters.wants("title"):
            found.add(("title", s["session_id"]))
    return found


def _has(term, field: str | None) -> bool:  # type: ignore[no-untyped-def]
    return (
        matches(parse(" ".join(term.words) + ("*" if term.prefix else "")), field)
        if (len(term.words) == 1)
        else matches(parse('"' + " ".join(term.words) + '"'), field)
    )


@pytest.mark.parametrize("text", QUERIES)
def test_hits_equal_a_brute_force_scan(store, home, text):
    assert backfill(store, home).ok
    everything = SearchFilters(limit=1000)
    got = {(h.kind, h.id) for h in store.search(text, everything)}
    assert got == brute_force(store, text, everything), text


def test_the_corpus_queries_find_something(store, home):
    assert backfill(store, home).ok
    found = [text for text in QUERIES if store.search(text, SearchFilters(limit=1000))]
    assert len(found) >= len(QUERIES) - 2


def test_hits_are_ranked_and_highlighted(store, home):
    backfill(store, home)
    hits = store.search("division zero", SearchFilters(limit=50))
    assert hits and [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    best = hits[0]
    assert best.label.startswith(("cc-", "cx-", "cu-")) and best.provider
    assert {w.lower() for w in best.to_json()["highlights"]} & {"division", "zero"}


def test_filters_narrow_the_hits(store, home):
    backfill(store, home)
    everything = store.search("app", SearchFilters(limit=1000))
    providers = {h.provider for h in everything}
    assert len(providers) >= 2
    only = build_search_filters(store, providers=["codex"], limit=1000)
    assert {h.provider for h in store.search("app", only)} == {"codex"}
    users = build_search_filters(store, kinds=["user"], limit=1000)
    assert {h.kind for h in store.search("app", users)} == {"user"}
    calls = build_search_filters(store, tool="Read", limit=1000)
    tools = store.search("app", calls)
    assert tools and {h.tool_name for h in tools} == {"Read"}
    later = build_search_filters(store, since="2030-01-01", limit=1000)
    assert store.search("app", later) == []
    earlier = build_search_filters(store, until="2030-01-01", limit=1000)
    assert {h.id for h in store.search("app", earlier)} <= {h.id for h in everything}
    project = build_search_filters(store, project="/tmp/demo", limit=1000)
    assert {h.project for h in store.search("app", project)} == {"demo"}
    models = {r["session_id"]: (r["model"] or "").lower() for r in store.query(
        "SELECT session_id, model FROM sessions")}  # fmt: skip
    some = sorted({m for m in models.values() if m})[0]
    by_model = store.search(
        "app", build_search_filters(store, models=[some[:5].upper()], limit=1000)
    )
    assert by_model and all(models[h.session_id].startswith(some[:5]) for h in by_model)


def test_a_session_filter_takes_its_subagents(store, home):
    backfill(store, home)
    family = build_search_filters(store, session="cc-11111111", limit=1000)
    labels = {h.label for h in store.search("app OR division OR fix", family)}
    assert "cc-11111111" in labels and "cc-a0fix000" in labels
    assert labels <= {"cc-11111111", "cc-a0fix000"}


def test_an_appended_line_is_found_after_the_next_sync(store, home):
    backfill(store, home)
    assert store.search("quokka", SearchFilters()) == []
    transcript = (
        home / ".claude" / "projects" / "-tmp-demo" / ("11111111-1111-4111-8111-111111111111.jsonl")
    )
    line = (
        transcript.read_bytes()
        .splitlines()[2]
        .replace(b"Find the bug in app.py and look up the docs", b"what does a quokka eat")
        .replace(b'"uuid":"u1"', b'"uuid":"u-quokka"')
    )
    with transcript.open("ab") as f:
        f.write(line + b"\n")
    assert backfill(store, home).ok
    (hit,) = store.search("quokka", SearchFilters())
    assert hit.kind == "user" and hit.label == "cc-11111111"


def test_an_unchanged_rerun_does_not_touch_the_index(store, home):
    backfill(store, home)
    again = sync(
        store,
        SyncOptions(
            sources={"claude-code": [home / ".claude"], "codex": [home / ".codex"]},
            workers=0,
            full=True,
        ),
    )
    assert again.rows_written == 0


def test_deleted_rows_leave_nothing_in_the_index(store, home):
    backfill(store, home)
    assert store.search("division", SearchFilters(limit=1000))
    conn = store.conn  # type: ignore[attr-defined]
    for table in ("message_sources", "tool_calls", "messages", "turns", "sessions"):
        if store.backend == "sqlite":  # type: ignore[attr-defined]
            sqlite_index.delete_rows(conn, table, "1", ())  # the SQLite writer's delete
        else:
            conn.execute(f"DELETE FROM {table}")
    if store.backend == "postgresql":  # type: ignore[attr-defined]
        conn.commit()
    assert store.search("division OR app OR zero", SearchFilters(limit=1000)) == []
    if store.backend == "sqlite":  # type: ignore[attr-defined]
        for index in ("messages_fts", "tool_calls_fts", "sessions_fts"):
            conn.execute(f"INSERT INTO {index} ({index}, rank) VALUES ('integrity-check', 0)")
            assert conn.execute(f"SELECT count(*) FROM {index}_docsize").fetchone() == (0,)


def test_words_are_found_whatever_surrounds_them(store):
    """Accents fold and any character that is not a letter or a digit ends a word, on both
    backends (PostgreSQL's words are prepared by its writer, `search/postgres_words.py`)."""
    first = item("w1", 2, text="un café noir, naïveté—x", title="Réglage du cache")
    first["toolCalls"][0]["resultJson"] = "     12→import os\n     13→ใส่ 日本語テキスト ok"
    first["toolCalls"][0]["paramsJson"] = {"file_path": "/srv/billing/webhooks.py"}
    second = item("w2", 2, text="plain ascii words only")
    second["messages"][1]["thinking"] = "the user's “quoted” word"
    assert store.import_batch(batch([first, second])).ok
    everything = SearchFilters(limit=1000)
    for text in ("cafe", "café", "naivete", "x", "reglage", "import", "ใส่", "日本語テキスト",
                 "webhooks", "billing/webhooks.py", "quoted", "user"):  # fmt: skip
        got = {(h.kind, h.id) for h in store.search(text, everything)}
        assert got and got == brute_force(store, text, everything), text


WORLD = {  # a word as it is written, in scripts whose words `words_of` and FTS5 split apart
    "мой": "Это мой который файл, ёлка",  # й and ё: FTS5 keeps them, words_of folds them
    "который": "Это мой который файл, ёлка",
    "ёлка": "Это мой который файл, ёлка",
    "καλημέρα": "Καλημέρα κόσμε",  # Greek accents
    "한국어": "한국어 텍스트 검색",  # Hangul syllables (words_of decomposes them)
    "नमस्ते": "नमस्ते दुनिया",  # a virama inside the word
    "العربية": "اللغة العربية",
}


def test_a_word_typed_as_it_is_written_is_found_in_any_script(store):
    """Typed as the text writes it, a word is found on both backends, and its snippet marks
    it (SQLite splits the query with the tokenizer that split the text; PostgreSQL folds both
    with `words_of`)."""
    texts = sorted(set(WORLD.values()))
    items = [item(f"s{i}", 2, text=text) for i, text in enumerate(texts)]
    assert store.import_batch(batch(items)).ok
    everything = SearchFilters(limit=1000)
    for word in WORLD:
        hits = store.search(word, everything)
        assert hits and {(h.kind, h.id) for h in hits} == brute_force(store, word, everything)
        # Python's regex ends a word before a Devanagari vowel sign: its mark may close early
        shown = [h.snippet.replace(MARK[1], "").lower() for h in hits]
        assert all(f"{MARK[0]}{word}" in s for s in shown), (word, shown)


def test_a_hit_found_through_folding_marks_the_word_as_written(store):
    """`cafe` finds `café`; the snippet marks `café` on both backends (PostgreSQL's
    `ts_headline` sees no `cafe` in the text, so the spelling is found in Python)."""
    assert store.import_batch(batch([item("f1", 2, text="un Café noir, s'il vous plaît")])).ok
    for query, word in (("cafe", "Café"), ("plait", "plaît")):
        hits = store.search(query, SearchFilters(limit=10))
        assert hits, query
        assert all(f"{MARK[0]}{word}{MARK[1]}" in h.snippet for h in hits), [
            h.snippet for h in hits
        ]


UNSPACED = {  # a word inside a run of a script written without spaces: found by substring
    "聊天记录": "帮我搜集所有codex和Claude的聊天记录，然后放到D盘",
    "记录": "帮我搜集所有codex和Claude的聊天记录，然后放到D盘",
    "日本語": "これは日本語のテキストです",
    "テキスト": "これは日本語のテキストです",
    "สวัสดี": "คำว่าสวัสดีครับทุกคน",
    "ສະບາຍດີ": "ເວົ້າວ່າສະບາຍດີທຸກຄົນ",
}


def test_a_word_inside_a_run_of_an_unspaced_script_is_found(store):
    """Chinese, Japanese, Thai, Lao: a word inside a run of letters is found on both backends,
    as the phrase of its characters, in text and in JSON parameters, with its snippet marked;
    characters that are not adjacent in the text do not match."""
    texts = sorted(set(UNSPACED.values()))
    items = [item(f"u{i}", 2, text=text) for i, text in enumerate(texts)]
    items[0]["toolCalls"][0]["paramsJson"] = {"command": 'mkdir -p "/d/对话记录-cc-codex"'}
    assert store.import_batch(batch(items)).ok
    everything = SearchFilters(limit=1000)
    for word in [*UNSPACED, "对话记录"]:
        hits = store.search(word, everything)
        assert hits and {(h.kind, h.id) for h in hits} == brute_force(store, word, everything)
        shown = [h.snippet.replace(MARK[0], "").replace(MARK[1], "") for h in hits]
        assert all(word in s for s in shown), (word, shown)
        assert all(MARK[0] in h.snippet for h in hits), word
    for absent in ("聊记", "本日", "テスト"):  # every character is there, not together
        assert store.search(absent, everything) == [], absent


def test_a_ledger_indexed_before_unspaced_scripts_were_split_is_reindexed(make_store):
    """Schema 15 indexes again the rows an older ledger indexed with a run of such text as one
    word: after the upgrade a word inside the run is found, and the others are untouched."""
    store = make_store()
    assert store.import_batch(batch([item("old", 2, text="看板 聊天记录导出 plain")])).ok
    _index_as_before_schema_15(store)
    assert store.search("记录", SearchFilters()) == []  # as an old ledger answered
    store.close()
    reopened = open_store(store.address)  # type: ignore[attr-defined]
    try:
        for word in ("记录", "聊天记录导出", "看板", "plain"):
            hits = {(h.kind, h.id) for h in reopened.search(word, SearchFilters())}
            assert hits and hits == brute_force(reopened, word, SearchFilters()), word
    finally:
        reopened.close()


def _index_as_before_schema_15(store: SessionStore) -> None:
    """The ledger's rows indexed as schema 14 indexed them, and its record of 15 undone."""
    if store.backend == "sqlite":
        conn = store.conn  # type: ignore[attr-defined]
        for index in sqlite_index.INDEXES:
            rows = f"FROM {index.table} t"
            conn.execute(
                f"INSERT INTO {index.name} ({index.name}, rowid, {index.column_list})"
                f" SELECT 'delete', t.rowid, {index.row_values('t')} {rows}"
            )
            conn.execute(f"{index.insert(segment=False)} {rows}")
        conn.execute("DELETE FROM _sqlite_migrations WHERE name = 'm015_search_unspaced_scripts'")
        return
    conn = store.conn  # type: ignore[attr-defined]
    with conn.transaction():
        conn.execute(
            "UPDATE messages SET content_tsv = to_tsvector('simple', lower(content))"
            " WHERE message_type <> 'tool_result'"
        )
        conn.execute("DELETE FROM tracehouse_migrations WHERE version = 15")
