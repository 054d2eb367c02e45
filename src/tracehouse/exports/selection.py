"""Which sessions an export writes, the file each one gets, and writing files whole.

Every format but Parquet writes a file per session. A file is named by the session's label
(what a user types), with the id's head added where two labels in one export collide, so a
parent's link to its subagent's file is known before either is written.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tracehouse.reports.filters import SessionFilters, session_sql
from tracehouse.sinks.protocol import SessionStore
from tracehouse.sinks.reads import LIST_COLUMNS

Row = dict[str, Any]
SELECT_COLUMNS = f"{LIST_COLUMNS}, last_imported_at"


def select_sessions(store: SessionStore, filters: SessionFilters) -> list[Row]:
    """The sessions the filters keep, oldest first."""
    where, params = session_sql(filters)
    return store.query(
        f"SELECT {SELECT_COLUMNS} FROM sessions s WHERE 1 = 1{where}"
        " ORDER BY s.created_at, s.session_id",
        params,
    )


def file_stems(sessions: Iterable[Row]) -> dict[str, str]:
    """session_id → file name without extension: the label, unique within the export."""
    rows = list(sessions)
    counts = Counter(r["label"] for r in rows)
    return {
        r["session_id"]: _safe(r["label"] if counts[r["label"]] == 1 else
                               f"{r['label']}-{_id_head(r['session_id'])}")
        for r in rows
    }  # fmt: skip


def _id_head(session_id: str) -> str:
    """The distinctive head of a ledger id (`ses_<hash>`): its hash, not the shared prefix."""
    return session_id.rpartition("_")[2][:8]


def _safe(name: str) -> str:
    """Labels are ASCII handles already; anything else becomes `_` so no label leaves `out`."""
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name).lstrip(".") or "_"


@contextmanager
def whole_file(path: Path) -> Iterator[Path]:
    """The path to write `path`'s content to: a `.partial` file beside it, renamed into place
    once the block ends cleanly, so a reader never finds half a file."""
    partial = path.with_name(path.name + ".partial")
    yield partial
    os.replace(partial, path)


def write_whole(path: Path, text: str) -> None:
    with whole_file(path) as partial:
        partial.write_text(text, encoding="utf-8")
