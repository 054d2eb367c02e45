"""A home holding every source's test logs with secrets planted in their text, in the real formats.

Every JSON string a person or an agent wrote (a prompt, a reply, a tool's output, a command,
a title) gets a planted secret appended, in the files (JSON, JSONL) and in the databases' JSON
values (Cursor's `state.vscdb`, OpenCode's `opencode.db`), so each format keeps its shape and
each source's parser reads them as it reads any text.
"""

from __future__ import annotations

import contextlib
import random
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from tests.conftest import DATA
from tests.redaction.planted import (
    CONTEXTS,
    KINDS,
    PLACEMENTS,
    Planted,
    base64_wrapped,
    place,
    plant,
)
from tests.sources.cursor_dbs import make_user_dir
from tests.sources.goose_sessions import write_sessions
from tests.sources.warp_db import write_warp
from tests.sources.zed_threads import write_threads

# Where people's and agents' words are kept, across the formats.
TEXT_KEYS = {
    "text", "content", "output", "result", "message", "prompt", "display", "command",
    "thinking", "summary", "title", "body", "stdout", "stderr", "aggregated_output", "cmd",
    "richText", "rawText", "query", "description", "thought", "response", "Text",
}  # fmt: skip
HOMES = (
    DATA / "claude" / "home",
    DATA / "codex" / "home",
    DATA / "gemini" / "home",
    DATA / "opencode" / "home",
    DATA / "cursor_agent" / "home",
    DATA / "pi" / "home",
    DATA / "kimi" / "home",
    DATA / "qwen" / "home",
    DATA / "copilot" / "home",
    DATA / "cline" / "home",
    DATA / "aider" / "home",
    DATA / "continue" / "home",
    DATA / "openhands" / "home",
    DATA / "roo" / "home",
    DATA / "kilo" / "home",
    DATA / "goose" / "home",
    DATA / "droid" / "home",
)


_WAYS = [*CONTEXTS, *PLACEMENTS]


class Planter:
    """Plants into one eligible text of every `every` (the bench plants sparsely, the tests
    into each)."""

    def __init__(self, seed: int = 11, every: int = 1) -> None:
        self.rng = random.Random(seed)
        self.planted: list[Planted] = []
        self.every = every
        self._n = 0
        self._seen = 0

    def next_text(self) -> str:
        """The next kind in the next context: the ways a tool shows one (a `.env`, a `curl`),
        then the ways a person pastes one (ending a sentence, in CJK text, URL-encoded)."""
        kind = KINDS[self._n % len(KINDS)]
        context = _WAYS[(self._n // len(KINDS)) % len(_WAYS)]
        self._n += 1
        if context in CONTEXTS:
            planted = plant(self.rng, kind, context)
            if self._n % 7 == 0:  # as a tool that encodes its output shows it
                planted = base64_wrapped(planted)
        else:
            planted = place(self.rng, kind, context)
        self.planted.append(planted)
        return planted.text

    def walk(self, value: Any, key: str | None = None) -> Any:
        if isinstance(value, dict):
            return {k: self.walk(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [self.walk(v, key) for v in value]
        if isinstance(value, str) and key in TEXT_KEYS and value and not value.startswith("{"):
            self._seen += 1
            if self._seen % self.every == 0:
                return f"{value}\n{self.next_text()}"
        return value


def planted_home(root: Path, seed: int = 11) -> tuple[Path, list[Planted]]:
    """A new home under `root` with every source's logs, secrets planted; and the secrets."""
    home = root / "home"
    for source in HOMES:
        shutil.copytree(source, home, dirs_exist_ok=True)
    make_user_dir(home)
    _opencode_database(home)
    _crush_database(home)
    write_threads(home / ".local" / "share" / "zed")
    write_sessions(home / ".local" / "share" / "goose")
    write_warp(home / ".local" / "state" / "warp-terminal")
    planter = Planter(seed)
    plant_tree(home, planter)
    return home, planter.planted


def plant_tree(home: Path, planter: Planter) -> None:
    """Plant into every log under `home`, in place (a copy: the fixtures are read-only)."""
    for path in sorted(home.rglob("*")):
        if path.suffix == ".jsonl":
            _rewrite_lines(path, planter.walk)
        elif path.suffix == ".json":
            _rewrite_document(path, planter.walk)
        elif path.suffix in (".vscdb", ".db", ".sqlite") and not path.name.endswith("-wal"):
            _rewrite_database(path, planter)
        elif path.name == ".aider.chat.history.md":
            _rewrite_prompts(path, planter)


def _rewrite_lines(path: Path, walk: Callable[[Any], Any]) -> None:
    out = []
    for line in path.read_bytes().splitlines():
        try:
            out.append(orjson.dumps(walk(orjson.loads(line))))
        except orjson.JSONDecodeError:
            out.append(line)
    path.write_bytes(b"\n".join(out) + b"\n")


def _rewrite_document(path: Path, walk: Callable[[Any], Any]) -> None:
    with contextlib.suppress(orjson.JSONDecodeError):  # a file that is not JSON stays as it is
        path.write_bytes(orjson.dumps(walk(orjson.loads(path.read_bytes()))))


def _rewrite_prompts(path: Path, planter: Planter) -> None:
    """Aider's Markdown history: a secret at the end of every prompt line (`#### …`)."""
    lines = path.read_text(encoding="utf-8").split("\n")
    planted = [f"{line} {planter.next_text()}" if line.startswith("#### ") else line
               for line in lines]  # fmt: skip
    path.write_text("\n".join(planted), encoding="utf-8")


def _rewrite_database(path: Path, planter: Planter) -> None:
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        tables = [n for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            columns = [r[1] for r in conn.execute(f'PRAGMA table_info("{table}")')]
            try:
                rows = conn.execute(f'SELECT rowid, * FROM "{table}"').fetchall()
            except sqlite3.OperationalError:  # a WITHOUT ROWID table (Zed's, Goose's): not read
                continue
            for rowid, *values in rows:
                for column, value in zip(columns, values, strict=True):
                    if isinstance(value, str) and column in TEXT_KEYS:  # a plain text column
                        stored: str | bytes = f"{value}\n{planter.next_text()}"
                    elif isinstance(value, str | bytes) and value[:1] in ("{", "[", b"{", b"["):
                        try:
                            new = orjson.dumps(planter.walk(orjson.loads(value)))
                        except orjson.JSONDecodeError:
                            continue
                        stored = new.decode() if isinstance(value, str) else new
                    else:
                        continue
                    conn.execute(
                        f'UPDATE "{table}" SET "{column}" = ? WHERE rowid = ?', (stored, rowid)
                    )
        conn.commit()
    finally:
        conn.close()


def _opencode_database(home: Path) -> None:
    """OpenCode's current storage, a `opencode.db` beside the older JSON files."""
    from tests.sources.test_opencode import make_database

    root = home / ".local" / "share" / "opencode"
    root.mkdir(parents=True, exist_ok=True)
    make_database(root).close()


def _crush_database(home: Path) -> None:
    """A project's Crush database, under the home's project roots."""
    from tests.sources.test_crush import make_database

    make_database(home / "projects" / "dotfiles").close()


def leaked(data: bytes, planted: list[Planted]) -> list[str]:
    """The planted secrets whose bytes are in `data`."""
    return [p.kind for p in planted if p.value.encode() in data]


def written_bytes(store: str | Path) -> bytes:
    """Every byte a ledger holds: a SQLite file with its WAL, or every PostgreSQL row as text."""
    store = str(store)
    if not store.startswith("postgresql"):
        return b"".join(p.read_bytes() for p in Path(store).parent.glob(Path(store).name + "*"))
    from tracehouse.model.tables import ALL_TABLES
    from tracehouse.store import open_store

    ledger = open_store(store)
    try:
        return b"\n".join(
            str(row["t"]).encode()
            for table in ALL_TABLES
            for row in ledger.query(f"SELECT {table.name}::text AS t FROM {table.name}")
        )
    finally:
        ledger.close()


def files_under(root: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file())
