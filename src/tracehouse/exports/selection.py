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
from tracehouse.store.protocol import SessionStore
from tracehouse.store.reads import LIST_COLUMNS

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


# An export holds whole transcripts: its files are the user's alone unless `--mode` says
# otherwise, as the ledger itself is.
FILE_MODE = 0o600


def directory_mode(file_mode: int) -> int:
    """The mode of an export's directory for files of `file_mode`: whoever may read the files
    may list and enter it (0600 → 0700, 0644 → 0755)."""
    mode = file_mode | 0o200
    for read, enter in ((0o400, 0o100), (0o040, 0o010), (0o004, 0o001)):
        if mode & read:
            mode |= enter
    return mode


def make_out(out: Path, file_mode: int = FILE_MODE) -> None:
    """The export's directory, made with `directory_mode` when it is new (one that exists is
    the user's and keeps its mode)."""
    if not out.is_dir():
        out.mkdir(parents=True, exist_ok=True)
        os.chmod(out, directory_mode(file_mode))


def parse_mode(text: str) -> int:
    """`--mode 0644` (octal) as a file mode: read and write bits only."""
    try:
        mode = int(text, 8)
    except ValueError:
        mode = -1
    if not 0 <= mode <= 0o666 or not mode & 0o600 == 0o600:
        raise ValueError(f"--mode {text}: an octal file mode such as 0600 or 0640, owner rw")
    return mode


@contextmanager
def whole_file(path: Path, mode: int = FILE_MODE) -> Iterator[Path]:
    """The path to write `path`'s content to: a `.partial` file beside it, renamed into place
    once the block ends cleanly, so a reader never finds half a file. The partial is made with
    `mode` before anything is written to it (a writer that opens it again keeps the mode)."""
    partial = path.with_name(path.name + ".partial")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    os.fchmod(fd, mode)  # whatever the umask
    os.close(fd)
    yield partial
    os.replace(partial, path)


def write_whole(path: Path, text: str, mode: int = FILE_MODE) -> None:
    with whole_file(path, mode) as partial:
        partial.write_text(text, encoding="utf-8")


def write_manifest(out: Path, manifest: dict[str, Any], mode: int = FILE_MODE) -> Path:
    """`manifest.json`: what the export holds, and what of it is redacted."""
    import orjson

    path = out / "manifest.json"
    data = orjson.dumps(manifest, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS)
    with whole_file(path, mode) as partial:
        partial.write_bytes(data + b"\n")
    return path
