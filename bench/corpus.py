"""The backfill bench's corpus: every fixture source, replicated with fresh ids per copy.

Claude Code projects and Codex rollouts go into one `.claude` and one `.codex` (a heavy user's
many projects), each copy under a fresh project directory and session file names. The other
sources keep one database or tree per root (an `opencode.db`, a Cursor `globalStorage`), so
each copy of each fixture home that has them becomes a home of its own under `homes/`.

Every id inside the files is made the copy's own too, so every copy is a distinct set of
sessions with fresh ledger ids whose links stay within the copy: uuids get the copy's number
as their first group, OpenCode's `ses_`/`msg_`/`prt_` ids as their first four characters,
a Gemini subagent's short id (its file's name) gets the copy's number appended.
Both keep the length, so a protobuf or hex-encoded JSON inside a database value stays valid.
Databases are copied with their `-wal` first and then rewritten through SQLite, never in place
(the fixtures are read-only), and `sources.toml` names every root for `--config`.
"""

from __future__ import annotations

import re
import shutil
import sqlite3
from pathlib import Path

from tracehouse.parsers.registry import PARSERS

VERSION = "v3"  # v3: all six sources; v2: Claude Code and Codex only
WHOLE_HOME = ("cursor", "gemini-cli", "opencode", "cursor-agent")  # replicated per home
_UUID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_OPENCODE = re.compile(rb"\b(ses|msg|prt)_[0-9A-Za-z]{4}(?=[0-9A-Za-z]{8})")
_HEX_JSON = re.compile(rb"(?:[0-9a-f]{2})+")
_DATABASE = (".db", ".vscdb")
_SHORT_ID = re.compile(r"[0-9a-z]{4,12}")


def build(source: Path, copies: int, out: Path) -> Path:
    target = (out / f"x{copies}-{VERSION}").resolve()
    if (target / ".complete").exists():
        return target
    shutil.rmtree(target, ignore_errors=True)
    homes = sorted(p for p in (source / "homes").iterdir() if p.is_dir())
    rollouts = sorted(
        path for home in homes for path in home.glob(".codex/*sessions/**/rollout-*")
    )  # fmt: skip
    projects = target / ".claude" / "projects"
    for n in range(copies):
        for home in homes:
            for project in sorted((home / ".claude" / "projects").glob("*")):
                if project.is_dir():
                    _copy_tree(project, projects / f"{project.name}-c{n:03d}", n)
        for path in rollouts:
            home = next(p for p in path.parents if p.name == ".codex")
            rel = path.parent.relative_to(home) / fresh_name(path.name, n)
            copy_file(path, target / ".codex" / rel, n)
        for home in homes:
            for root in _whole_home_roots(home):
                where = target / "homes" / f"c{n:03d}" / home.name / root.relative_to(home)
                _copy_tree(root, where, n)
    (target / "sources.toml").write_text(_sources_toml(target))
    (target / ".complete").write_text("ok")
    return target


def _whole_home_roots(home: Path) -> list[Path]:
    return [
        root
        for provider in WHOLE_HOME
        for root in PARSERS[provider].default_roots(home, {})
        if root.is_dir()
    ]


def _sources_toml(target: Path) -> str:
    roots: dict[str, list[Path]] = {
        "claude-code": [target / ".claude"],
        "codex": [target / ".codex"],
    }
    for home in sorted((target / "homes").glob("c*/*")):
        for provider in WHOLE_HOME:
            found = [r for r in PARSERS[provider].default_roots(home, {}) if r.is_dir()]
            roots.setdefault(provider, []).extend(found)
    lines = ["[sources]"]
    for provider, paths in roots.items():
        listed = ", ".join(f'"{p}"' for p in paths)
        lines.append(f'"{provider}" = [{listed}]')
    return "\n".join(lines) + "\n"


def _copy_tree(root: Path, dest: Path, n: int) -> None:
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            rel = path.relative_to(root)
            out = dest.joinpath(*(fresh_name(part, n) for part in rel.parts))
            if path.name.endswith(("-wal", "-shm", "-journal")):
                continue  # copied with their database
            if path.suffix in _DATABASE:
                copy_database(path, out, n)
            elif path.parent.parent.name == "chats" and _SHORT_ID.fullmatch(path.stem):
                _copy_gemini_subagent(path, out, n)
            else:
                copy_file(path, out, n)


def fresh_name(name: str, n: int) -> str:
    return fresh(name.encode(), n).decode()


def fresh(data: bytes, n: int) -> bytes:
    """Every id in `data` made copy `n`'s, at the same length."""
    prefix = f"{n:08x}".encode()
    data = _UUID.sub(lambda m: prefix + m.group()[8:], data)
    tag = f"{n:04x}".encode()
    return _OPENCODE.sub(lambda m: m.group(1) + b"_" + tag, data)


def copy_file(path: Path, out: Path, n: int) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(fresh(path.read_bytes(), n))


def _copy_gemini_subagent(path: Path, out: Path, n: int) -> None:
    """A Gemini subagent's chat is named by a short random id that only it holds."""
    new = f"{path.stem}{n:03x}"
    out = out.with_name(new + path.suffix)
    out.parent.mkdir(parents=True, exist_ok=True)
    quoted = f'"{path.stem}"'.encode()
    out.write_bytes(fresh(path.read_bytes(), n).replace(quoted, f'"{new}"'.encode()))


def copy_database(path: Path, out: Path, n: int) -> None:
    """The database with its `-wal` (rows may be only there), every text and blob value made
    copy `n`'s through SQLite so that its indexes stay in order."""
    out.parent.mkdir(parents=True, exist_ok=True)
    for suffix in ("", "-wal"):
        if Path(f"{path}{suffix}").exists():
            shutil.copyfile(f"{path}{suffix}", f"{out}{suffix}")
    conn = sqlite3.connect(out)
    try:
        conn.create_function("fresh", 1, lambda v: _fresh_value(v, n), deterministic=True)
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for table in tables:
            if table.startswith("sqlite_"):
                continue
            columns = [r[1] for r in conn.execute(f'PRAGMA table_info("{table}")')]
            sets = ", ".join(f'"{c}" = fresh("{c}")' for c in columns)
            conn.execute(f'UPDATE OR IGNORE "{table}" SET {sets}')
        conn.commit()
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    except sqlite3.DatabaseError:
        pass  # a database SQLite cannot read is copied as it is: the parser's reject is the case
    finally:
        conn.close()


def _fresh_value(value: object, n: int) -> object:
    if isinstance(value, str):
        raw = value.encode()
        if _HEX_JSON.fullmatch(raw):  # the Cursor agent's meta: hex-encoded JSON
            return fresh(bytes.fromhex(value), n).hex()
        return fresh(raw, n).decode()
    if isinstance(value, bytes):
        return fresh(value, n)
    return value
