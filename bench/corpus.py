"""The backfill bench's corpus: every fixture source, replicated with fresh ids per copy.

Claude Code projects and Codex rollouts go into one `.claude` and one `.codex` (a heavy user's
many projects), each copy under a fresh project directory and session file names. The other
sources keep one database or tree per root (an `opencode.db`, a Cursor `globalStorage`), so
each copy of each fixture home that has them becomes a home of its own under `homes/`; Aider's
and Crush's project folders are copied into it where they were.

Every id inside the files is made the copy's own too, so every copy is a distinct set of
sessions with fresh ledger ids whose links stay within the copy:
- a uuid, and a Claude subagent's short hex id, becomes a hash of itself and the copy's number;
- OpenCode's `ses_`/`msg_`/`prt_` ids get the copy's number as their first four characters and
  a hash as their last four;
- a Gemini subagent's short id (its file's name) gets the copy's number appended.
All keep the length, so a protobuf or hex-encoded JSON inside a database value stays valid.
Labels are cut from the head of a uuid (the end of an OpenCode id), so ids are hashed rather than
numbered: v3 gave a uuid the copy's number as its first group, which put every session of a copy
under one label, as real ids never do, and the store's label work grew with the copies.
Databases are copied with their `-wal` first and then rewritten through SQLite, never in place
(the fixtures are read-only), and `sources.toml` names every root for `--config`.
"""

from __future__ import annotations

import re
import shutil
import sqlite3
from pathlib import Path

import xxhash

from tracehouse.parsers.registry import PARSERS

# v6: eighteen sources; v5: thirteen; v4: uuids hashed whole; v3: six; v2: Claude Code, Codex
VERSION = "v6"
WHOLE_HOME = ("cursor", "gemini-cli", "opencode", "cursor-agent", "copilot-cli", "qwen-code",
              "pi", "kimi-cli", "cline", "continue",
              "openhands", "zed", "goose", "warp")  # replicated per home  # fmt: skip
# Kept in projects, not under a root of their own: each project folder holding one is copied.
IN_PROJECTS = ("aider", "crush")
_UUID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_OPENCODE = re.compile(rb"\b(ses|msg|prt)_([0-9A-Za-z]{4})([0-9A-Za-z]{8,}?)([0-9A-Za-z]{4})\b")
_HEX_JSON = re.compile(rb"(?:[0-9a-f]{2})+")
_DATABASE = (".db", ".vscdb")
_SHORT_ID = re.compile(r"[0-9a-z]{4,12}")
_MS_FOLDER = re.compile(r"1[0-9]{12}")
# OpenHands names a conversation by 32 hex digits, its folder and its metadata's id alike
_HEX_ID = re.compile(r"[0-9a-f]{32}")
_CONVERSATION = re.compile(rb'("conversation_id":\s*")([0-9a-f]{32})(")')


def build(source: Path, copies: int, out: Path) -> Path:
    source = source.resolve()  # a relative corpus (CI's `../shared/fixtures`) too
    target = (out / f"x{copies}-{VERSION}").resolve()
    if (target / ".complete").exists():
        return target
    shutil.rmtree(target, ignore_errors=True)
    homes = sorted(p for p in (source / "homes").iterdir() if p.is_dir())
    rollouts = sorted(
        path for home in homes for path in home.glob(".codex/*sessions/**/rollout-*")
    )  # fmt: skip
    projects = target / ".claude" / "projects"
    agents = _claude_agent_ids(homes)
    for n in range(copies):
        for home in homes:
            for project in sorted((home / ".claude" / "projects").glob("*")):
                if project.is_dir():
                    _copy_tree(project, projects / f"{project.name}-c{n:03d}", n, agents)
        for path in rollouts:
            home = next(p for p in path.parents if p.name == ".codex")
            rel = path.parent.relative_to(home) / fresh_name(path.name, n)
            copy_file(path, target / ".codex" / rel, n)
        for home in homes:
            for root in _whole_home_roots(home):
                where = target / "homes" / f"c{n:03d}" / home.name / root.relative_to(home)
                _copy_tree(root, where, n)
    (target / "sources.toml").write_text(sources_toml(target))
    (target / ".complete").write_text("ok")
    return target


def _whole_home_roots(home: Path) -> list[Path]:
    roots = [
        root
        for provider in WHOLE_HOME
        for root in PARSERS[provider].default_roots(home, {})
        if root.is_dir()
    ]
    for provider in IN_PROJECTS:
        roots += PARSERS[provider].watch_roots([home])  # the folders that hold its logs
    return roots


def sources_toml(target: Path) -> str:
    """A `--config` naming every root of a tree laid out as the corpus is."""
    roots: dict[str, list[Path]] = {
        "claude-code": [target / ".claude"],
        "codex": [target / ".codex"],
    }
    for home in sorted((target / "homes").glob("c*/*")):
        for provider in WHOLE_HOME:
            found = [r for r in PARSERS[provider].default_roots(home, {}) if r.is_dir()]
            roots.setdefault(provider, []).extend(found)
        for provider in IN_PROJECTS:
            if PARSERS[provider].discover([home]):
                roots.setdefault(provider, []).append(home)
    lines = ["[sources]"]
    for provider, paths in roots.items():
        listed = ", ".join(f'"{p}"' for p in paths)
        lines.append(f'"{provider}" = [{listed}]')
    return "\n".join(lines) + "\n"


def _claude_agent_ids(homes: list[Path]) -> re.Pattern[bytes] | None:
    """Claude subagents' short hex ids (`agent-<id>.jsonl`), which records, tool results and
    task files spell in several ways: each is replaced wherever it occurs."""
    found = {
        path.stem.removeprefix("agent-")
        for home in homes
        for path in home.glob(".claude/projects/**/agent-*.jsonl")
    }
    found = {i for i in found if re.fullmatch(r"[0-9a-f]{7,}", i)}
    if not found:
        return None
    return re.compile(rb"\b(?:" + b"|".join(sorted(i.encode() for i in found)) + rb")\b")


def _copy_tree(root: Path, dest: Path, n: int, agents: re.Pattern[bytes] | None = None) -> None:
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            rel = path.relative_to(root)
            out = dest.joinpath(*(fresh_name(part, n, agents) for part in rel.parts))
            if path.name.endswith(("-wal", "-shm", "-journal")):
                continue  # copied with their database
            if path.suffix in _DATABASE:
                copy_database(path, out, n)
            elif path.parent.parent.name == "chats" and _SHORT_ID.fullmatch(path.stem):
                _copy_gemini_subagent(path, out, n)
            else:
                copy_file(path, out, n, agents)


def fresh_name(name: str, n: int, agents: re.Pattern[bytes] | None = None) -> str:
    if _MS_FOLDER.fullmatch(name):  # a Cline task folder: its id is its creation time in ms
        return str(int(name) + n)
    if _HEX_ID.fullmatch(name):
        return _hashed_hex(name.encode(), n).decode()
    return fresh(name.encode(), n, agents).decode()


def fresh(data: bytes, n: int, agents: re.Pattern[bytes] | None = None) -> bytes:
    """Every id in `data` made copy `n`'s, at the same length (`agents`: Claude subagent ids)."""
    data = _UUID.sub(lambda m: _fresh_uuid(m.group(), n), data)
    data = _CONVERSATION.sub(lambda m: m.group(1) + _hashed_hex(m.group(2), n) + m.group(3), data)
    if agents is not None:
        data = agents.sub(lambda m: _hashed_hex(m.group(), n), data)
    tag = f"{n:04x}".encode()
    return _OPENCODE.sub(
        lambda m: m.group(1) + b"_" + tag + m.group(3) + _hashed_hex(m.group(), n)[:4], data
    )


def _fresh_uuid(uuid: bytes, n: int) -> bytes:
    h = _hashed_hex(uuid, n)
    return b"-".join((h[:8], h[8:12], h[12:16], h[16:20], h[20:32]))


def _hashed_hex(value: bytes, n: int) -> bytes:
    """Hex of `value`'s length (at most 64) from a hash of it and the copy's number."""
    digest = xxhash.xxh3_128_hexdigest(b"%d:" % n + value) + xxhash.xxh3_128_hexdigest(value)
    return digest[: len(value)].encode()


def copy_file(path: Path, out: Path, n: int, agents: re.Pattern[bytes] | None = None) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(fresh(path.read_bytes(), n, agents))


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
