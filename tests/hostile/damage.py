"""Damage beyond one value of one line (issue #40): whole files and databases as a crash, a disk,
a sync tool or a buggy release leaves them.

* text files: a line or document replaced by `null` or another top-level type, a value inside a
  whole JSON document, two lines swapped, a record made its own parent (or two each other's),
  CRLF line ends, a byte-order mark, no final newline, a line far over the line limit;
* databases: a cell set to NULL, an INTEGER, a REAL, an integer past int64, text where a blob
  is or a blob where text is; junk rows; the file truncated, zero-length, garbage pages, a
  garbage `-wal` or `-journal`.

Each function changes a file in place (a copy) and returns what it did, in words for the report.
"""

from __future__ import annotations

import os
import random
import sqlite3
from pathlib import Path
from typing import Any

import orjson

from tests.hostile.mutations import HOSTILE_VALUES, Mutation, mutate_line

TOP_LEVEL = (b"null", b"5", b"-1.5", b'"text"', b"[]", b"[1, 2]", b"true", b"{}")
# The trials run with this line limit, so that a line "far over" it stays cheap to write.
TRIAL_MAX_LINE = 4 * 1024 * 1024
TEXT_DAMAGE = ("top-level", "document-value", "swap", "own-parent", "crlf", "bom", "no-newline",
               "over-limit")  # fmt: skip
DATABASE_DAMAGE = ("cell-type", "junk-rows", "truncate", "zero-length", "garbage-pages",
                   "garbage-wal", "garbage-journal")  # fmt: skip
PARENT_KEYS = (b'"parentUuid"', b'"parent_id"', b'"parentId"', b'"parentID"')


def damage_text(path: Path, kind: str, rng: random.Random) -> str:
    data = path.read_bytes()
    lines = data.split(b"\n")
    numbered = [i for i, line in enumerate(lines) if line.strip()]
    if not numbered:
        return "nothing to damage"
    at = rng.choice(numbered)
    if kind == "top-level":
        value = rng.choice(TOP_LEVEL)
        if path.suffix == ".json":
            path.write_bytes(value)
            return f"document replaced by {value.decode()}"
        lines[at] = value
        path.write_bytes(b"\n".join(lines))
        return f"line {at + 1} replaced by {value.decode()}"
    if kind == "document-value":
        m = Mutation("value", rng.randrange(1 << 16), rng.randrange(len(HOSTILE_VALUES)))
        path.write_bytes(mutate_line(data, m))  # the whole file as one JSON value
        return f"document {m.describe()}"
    if kind == "swap" and len(numbered) > 1:
        other = rng.choice([i for i in numbered if i != at])
        lines[at], lines[other] = lines[other], lines[at]
        path.write_bytes(b"\n".join(lines))
        return f"lines {at + 1} and {other + 1} swapped"
    if kind == "own-parent":
        return _own_parent(path, lines, numbered, rng)
    if kind == "crlf":
        path.write_bytes(data.replace(b"\n", b"\r\n"))
        return "CRLF line ends"
    if kind == "bom":
        path.write_bytes(b"\xef\xbb\xbf" + data)
        return "byte-order mark"
    if kind == "no-newline":
        path.write_bytes(data.rstrip(b"\n"))
        return "no final newline"
    if kind == "over-limit":
        long = b'{"type":"user","text":"' + b"L" * (TRIAL_MAX_LINE + 1024) + b'"}'
        lines.insert(at, long)
        path.write_bytes(b"\n".join(lines))
        return f"line {at + 1} of {len(long):,} bytes, over the line limit"
    return "nothing to damage"


def _own_parent(path: Path, lines: list[bytes], numbered: list[int], rng: random.Random) -> str:
    """A record made its own parent, or two records each other's: a loop no agent writes."""
    records = []
    for i in numbered:
        try:
            record = orjson.loads(lines[i])
        except orjson.JSONDecodeError:
            continue
        if isinstance(record, dict):
            key = next((k for k in ("parentUuid", "parent_id", "parentId") if k in record), None)
            own = next((record[k] for k in ("uuid", "id") if isinstance(record.get(k), str)), None)
            if key and own:
                records.append((i, record, key, own))
    if not records:
        return "nothing to damage"
    first = rng.choice(records)
    second = rng.choice(records)
    first[1][first[2]] = second[3]  # itself when the same record was drawn
    second[1][second[2]] = first[3]
    for i, record, _key, _own in (first, second):
        lines[i] = orjson.dumps(record)
    path.write_bytes(b"\n".join(lines))
    return f"parent loop between lines {first[0] + 1} and {second[0] + 1}"


def damage_database(db: Path, kind: str, rng: random.Random) -> str:
    if kind in ("cell-type", "junk-rows"):
        conn = sqlite3.connect(db)
        try:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            tables = [
                name
                for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
                if not name.startswith("sqlite_")
            ]
            if not tables:
                return "nothing to damage"
            table = rng.choice(tables)
            done = (_cell_type if kind == "cell-type" else _junk_rows)(conn, table, rng)
            conn.commit()
            return done
        except sqlite3.DatabaseError as exc:
            return f"left as it was ({exc})"
        finally:
            conn.close()
    size = db.stat().st_size
    if kind == "truncate":
        with db.open("r+b") as f:
            f.truncate(rng.randrange(size) if size else 0)
        return "database truncated"
    if kind == "zero-length":
        db.write_bytes(b"")
        return "database emptied to zero bytes"
    if kind == "garbage-pages":
        with db.open("r+b") as f:
            for _ in range(rng.randrange(1, 4)):
                f.seek(rng.randrange(max(1, size)))
                f.write(os.urandom(rng.choice((16, 512, 4096))))
        return "garbage written over pages"
    side = "-wal" if kind == "garbage-wal" else "-journal"
    header = b"\x37\x7f\x06\x82" if side == "-wal" else b"\xd9\xd5\x05\xf9\x20\xa1\x63\xd7"
    Path(f"{db}{side}").write_bytes(header + os.urandom(rng.randrange(100, 50_000)))
    return f"garbage {side}"


def _cell_type(conn: sqlite3.Connection, table: str, rng: random.Random) -> str:
    columns = [r[1] for r in conn.execute(f'PRAGMA table_info("{table}")')]
    rowids = [r for (r,) in conn.execute(f'SELECT rowid FROM "{table}"')]
    if not columns or not rowids:
        return "nothing to damage"
    column, rowid = rng.choice(columns), rng.choice(rowids)
    (old,) = conn.execute(f'SELECT "{column}" FROM "{table}" WHERE rowid = ?', (rowid,)).fetchone()
    choices: list[Any] = [None, 7, -1, 3.5, 2**62, 2**63 - 1, b"\xff\xfe", "plain text", "null"]
    if isinstance(old, str):
        choices.append(old.encode("utf-8", "surrogatepass"))  # the same text, as a blob
    if isinstance(old, bytes):
        choices.append(old.decode("utf-8", "replace"))  # the same bytes, as text
    value = rng.choice(choices)
    try:
        conn.execute(f'UPDATE "{table}" SET "{column}" = ? WHERE rowid = ?', (value, rowid))
    except sqlite3.DatabaseError as exc:  # a constraint: the cell stays
        return f"{table} row {rowid} {column}: left as it was ({exc})"
    return f"{table} row {rowid} {column} = {value!r:.40}"


def _junk_rows(conn: sqlite3.Connection, table: str, rng: random.Random) -> str:
    columns = [r[1] for r in conn.execute(f'PRAGMA table_info("{table}")')]
    added = 0
    for _ in range(rng.randrange(1, 4)):
        values = [rng.choice([None, rng.randrange(-5, 10**12), 2.5, os.urandom(8).hex(),
                              b"\x00\x01", rng.choice(HOSTILE_VALUES)[:64].decode("utf-8",
                              "replace")]) for _ in columns]  # fmt: skip
        marks = ", ".join("?" for _ in columns)
        try:
            conn.execute(f'INSERT INTO "{table}" VALUES ({marks})', values)
            added += 1
        except sqlite3.DatabaseError:
            continue  # a constraint refused it
    return f"{added} junk rows in {table}"
