"""`files_touched`: the tool calls that read, wrote or ran something on a path, newest first.

Every agent names files in its own parameter (`file_path`, `filePath`, `target_file`, a patch's
`*** Update File:` header, a shell command's words), relative to its workspace or not, with `/`
or `\\`. A path is recognised in all of them and matched at a component boundary, so
`webhooks.py`, `billing/webhooks.py` and the absolute path all find the same calls.

The calls to look at are those whose indexed text holds the path's last part as a phrase (the
search index: FTS5 on SQLite, the tsvector on PostgreSQL), so a lookup reads the few calls
that name the file, not every call's parameters; each is then matched exactly.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from tracehouse.errors import ConfigError
from tracehouse.model.stored_json import decode_mapping
from tracehouse.reports.filters import SessionFilters, session_sql
from tracehouse.search.query import parse, to_fts5, to_tsquery_sql, words_of
from tracehouse.store.protocol import SessionStore

PATH_KEYS = frozenset({
    "file_path", "filePath", "path", "absolute_path", "target_file", "notebook_path", "dir_path",
    "relative_workspace_path", "relativeWorkspacePath", "target_directory", "file", "filename",
    "paths", "files", "file_paths",
})  # fmt: skip
COMMAND_KEYS = ("command", "cmd", "commands")
PATCH = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+?)\s*$|^\*\*\* Move to: (.+?)\s*$", re.M)
PATCH_VERBS = {"Add": "created", "Update": "edited", "Delete": "deleted", None: "moved to"}
_WINDOWS = re.compile(r"^[A-Za-z]:/")
_SHELL_SPLIT = re.compile(r"[\s;|&<>()]+")
CHUNK = 100  # candidate rows read at a time: most lookups want a page of 20


@dataclass(frozen=True)
class Touch:
    tool_call_id: str
    message_id: str | None
    session_id: str
    label: str
    provider: str
    title: str | None
    at: str | None
    tool_name: str
    action: str  # read, edited, wrote, created, deleted, searched, ran, used
    path: str  # as the call named it


def files_touched(
    store: SessionStore, path: str, filters: SessionFilters, *, limit: int = 20, offset: int = 0
) -> tuple[list[Touch], bool]:
    """The calls that touched `path`, newest first: `limit` of them after `offset`, and whether
    there are more."""
    wanted = normalise(path.strip())
    if not wanted.strip("/"):
        raise ConfigError("path: give a file or folder path, or its last parts (e.g. src/app.py)")
    name = wanted.rstrip("/").rsplit("/", 1)[-1]
    named, named_params = _naming(store, name)
    where, params = session_sql(filters)
    sql = (
        "SELECT t.tool_call_id, t.message_id, t.session_id, t.tool_name, t.params, t.started_at,"
        " s.label, s.source_provider, s.title, s.task_description, s.workspace_path"
        " FROM tool_calls t JOIN sessions s ON s.session_id = t.session_id"
        f" WHERE {named}{where}"
        " ORDER BY coalesce(t.started_at, s.updated_at) IS NULL,"
        " coalesce(t.started_at, s.updated_at) DESC, t.session_id, t.seq LIMIT ? OFFSET ?"
    )
    found: list[Touch] = []
    read = 0
    while len(found) <= offset + limit:
        rows = store.query(sql, [*named_params, *params, CHUNK, read])
        read += len(rows)
        for row in rows:
            found.extend(_touches(row, wanted, name.lower()))
        if len(rows) < CHUNK:
            break
    return found[offset : offset + limit], len(found) > offset + limit


def _naming(store: SessionStore, name: str) -> tuple[str, list[Any]]:
    """A condition on `tool_calls t`: the call's indexed text holds `name`'s words in order."""
    if not words_of(name):
        raise ConfigError(f"path {name!r}: name a file by its letters or digits")
    query = parse('"' + name.replace('"', " ") + '"')
    if store.backend == "postgresql":
        tsquery, params = to_tsquery_sql(query)
        return f"t.search_tsv @@ {tsquery}", list(params)
    matched = "SELECT rowid FROM tool_calls_fts WHERE tool_calls_fts MATCH ?"
    return f"t.rowid IN ({matched})", ["{params} : (" + to_fts5(query) + ")"]


def normalise(path: str) -> str:
    """`/` for `\\`, no `./`, no doubled or trailing separators."""
    p = re.sub(r"/+", "/", path.replace("\\", "/"))
    while p.startswith("./"):
        p = p[2:]
    return p.rstrip("/") or p


def matches(touched: str, wanted: str, workspace: str | None) -> bool:
    t = normalise(touched)
    if workspace and not t.startswith("/") and not _WINDOWS.match(t):
        t = normalise(f"{workspace}/{t}")
    if _WINDOWS.match(t) or _WINDOWS.match(wanted):  # Windows paths ignore case
        t, wanted = t.lower(), wanted.lower()
    return t == wanted or t.endswith("/" + wanted.lstrip("/"))


def _touches(row: dict[str, Any], wanted: str, needle: str) -> Iterator[Touch]:
    params, _problem = decode_mapping(row["params"])
    seen: set[tuple[str, str]] = set()
    for action, path in named_paths(row["tool_name"], params, needle):
        if (action, path) not in seen and matches(path, wanted, row["workspace_path"]):
            seen.add((action, path))
            yield Touch(
                tool_call_id=row["tool_call_id"],
                message_id=row["message_id"],
                session_id=row["session_id"],
                label=row["label"],
                provider=row["source_provider"],
                title=row["title"] or row["task_description"],
                at=row["started_at"],
                tool_name=row["tool_name"],
                action=action,
                path=path,
            )


def named_paths(tool: str, params: dict[str, Any], needle: str = "") -> Iterator[tuple[str, str]]:
    """(action, path) for each path a call's parameters name; with `needle` (lower case), only
    commands and patches whose text holds it are read word by word."""
    verb = tool_verb(tool)
    for key, value in params.items():
        if key in PATH_KEYS:
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, str) and item.strip():
                    yield verb, item.strip()
        elif key in COMMAND_KEYS:
            yield from (("ran", word) for word in _command_words(value, needle))
        if isinstance(value, str) and "*** " in value and needle in value.lower():
            for found in PATCH.finditer(value):
                yield PATCH_VERBS[found.group(1)], (found.group(2) or found.group(3))


def tool_verb(tool: str) -> str:
    name = tool.lower()
    for verb, words in _VERBS:
        if any(w in name for w in words):
            return verb
    return "used"


_VERBS = (
    ("edited", ("edit", "replace", "patch", "apply")),
    ("wrote", ("write", "create", "save")),
    ("searched", ("glob", "grep", "search", "find", "list", "ls")),
    ("read", ("read", "view", "cat", "open", "fetch")),
    ("ran", ("bash", "shell", "exec", "terminal", "command", "run")),
)


def _command_words(value: Any, needle: str) -> Iterator[str]:
    """The words of a shell command that could be paths (of the parts that hold `needle`)."""
    texts = value if isinstance(value, list) else [value]
    for text in texts:
        if not isinstance(text, str) or needle not in text.lower():
            continue
        try:
            words = shlex.split(text, posix=True)
        except ValueError:  # an unclosed quote: split on the shell's separators alone
            words = _SHELL_SPLIT.split(text)
        for word in words:
            for part in _SHELL_SPLIT.split(word):
                if ("/" in part or "\\" in part or "." in part) and len(part) < 500:
                    yield part.strip("'\"")
