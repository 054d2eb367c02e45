"""A Cursor agent transcript → ledger rows (README.md here has the mapping).

Turn k is the k-th user prompt with the replies after it (`t<k>`); reply i of it is message
`t<k>.<i>` (0 is the prompt), and a tool call without an id of its own is `t<k>.<i>.<j>`. Ids are
positions because no variant has record ids: a twin read later (`.txt` beside `.jsonl`) then names
the same rows. No variant has tokens or per-message times; the store has a creation time and the
model last used, transcripts only their files' modification times.
"""

from __future__ import annotations

import hashlib
import re
import string
from collections.abc import Iterable, Iterator
from typing import Any

import orjson

from tracehouse.model import ids
from tracehouse.model.fields import cap
from tracehouse.model.rows import TableBuffer, turn_row
from tracehouse.model.tables import MESSAGES, TOKEN_COLUMNS, TOOL_CALLS, TURNS
from tracehouse.parsers.cursor_agent.discover import PROVIDER
from tracehouse.parsers.cursor_agent.transcripts import Reply, Tool, Transcript

SPAWNING_TOOLS = ("task", "agent", "subagent")
USER_QUERY = re.compile(r"<user_query>\s*(.*?)\s*(?:</user_query>|$)", re.S)
WORKSPACE_LINE = re.compile(r"Workspace Path: *(\S+)")
# A path from its first separator; a drive letter before it is taken in `_absolute_paths`. Led
# by the optional drive, the pattern was tried at every character of every text scanned.
ABSOLUTE_PATH = re.compile(r"[\\/][^\s\"'`<>|*?]+")
_DRIVES = frozenset(string.ascii_letters)


class TranscriptBuilder:
    def __init__(
        self, transcript: Transcript, source_id: str, where: dict[str, Any], max_field: int
    ) -> None:
        self.transcript = transcript
        self.sid = source_id
        self.session_id = ids.session_id(PROVIDER, source_id)
        self.where = where
        self.max_field = max_field
        self.turns = TableBuffer(TURNS)
        self.messages = TableBuffer(MESSAGES)
        self.calls = TableBuffer(TOOL_CALLS)
        self.children = list(where.get("children") or [])  # subagents, in spawning order
        # What may name the workspace, in conversation order: (a reply's text?, text or input)
        self.naming: list[tuple[bool, Any]] = [(False, self.transcript.system or "")]

    def build(self) -> None:
        previous = None
        for k, replies in enumerate(self.transcript.turns):
            turn_id = ids.turn_id(PROVIDER, self.sid, f"t{k}")
            queries = []
            for i, reply in enumerate(replies):
                message_id = self._message(reply, f"t{k}.{i}", turn_id, k == i == 0)
                if reply.role == "user":
                    queries.append(message_id)
                for j, tool in enumerate(reply.tools):
                    self._tool_call(tool, f"t{k}.{i}.{j}", turn_id, message_id)
            last = next((i for i in reversed(range(len(replies)))
                         if replies[i].role == "assistant"), None)  # fmt: skip
            row = turn_row(PROVIDER, self.sid, f"t{k}", k, previous)
            row["query_message_ids"] = queries
            if last is not None:
                row["response_message_id"] = ids.message_id(PROVIDER, self.sid, f"t{k}.{last}")
            self.turns.add(row)
            previous = turn_id

    def _message(self, reply: Reply, key: str, turn_id: str, first: bool) -> str:
        message_id = ids.message_id(PROVIDER, self.sid, key)
        self.naming.append((True, reply.text))
        self.messages.add(
            {
                "message_id": message_id,
                "session_id": self.session_id,
                "turn_id": turn_id,
                "source_message_id": key,
                "seq": len(self.messages),
                "role": reply.role,
                "message_type": reply.role,
                "content": cap(reply.text, self.max_field) if reply.text else None,
                "thinking": cap(reply.thinking, self.max_field) if reply.thinking else None,
                "context": {"system": self.transcript.system}
                if first and self.transcript.system else None,
                "source_ref": f"{self.where['source_path']}#{key}",
            }
        )  # fmt: skip
        return message_id

    def _tool_call(self, tool: Tool, key: str, turn_id: str, message_id: str) -> None:
        child = None
        if tool.name.lower() in SPAWNING_TOOLS and self.children:
            child = self.children.pop(0)  # children pair with spawning calls by position
        if tool.input is not None:
            self.naming.append((False, tool.input))
        self.calls.add(
            {
                "tool_call_id": ids.tool_call_id(PROVIDER, self.sid, tool.id or key),
                "session_id": self.session_id,
                "turn_id": turn_id,
                "message_id": message_id,
                "source_tool_call_id": tool.id or key,
                "seq": len(self.calls),
                "tool_name": tool.name,
                "params": _params(tool.input),
                "result": _text(tool.result, self.max_field) if tool.has_result else None,
                # a transcript keeps a call once it was made; only the store says what came back
                "status": "completed" if tool.has_result or self.transcript.form != "store"
                else "pending",
                "spawned_session_id": ids.session_id(PROVIDER, child) if child else None,
                "spawned_source_session_id": child,
            }
        )  # fmt: skip

    def named_paths(self) -> Iterator[str]:
        """The absolute paths the conversation names, in order, found only as far as they are
        asked for: the workspace is nearly always among the first, and scanning every message
        and tool input up front was 6% of all parsing."""
        for reply, value in self.naming:
            if reply:
                yield from (m[1] for m in WORKSPACE_LINE.finditer(value))
            # A tool input's strings as they are: in its JSON text a Windows path's backslashes
            # are escaped, and the workspace found there was `C:\\Users\\…`.
            for text in _strings(value):
                yield from _absolute_paths(text)

    def has_content(self) -> bool:
        return len(self.messages) > 0

    def session_row(self) -> dict[str, Any]:
        where = self.where
        meta = where.get("store_meta") or {}
        first = next((r.text for t in self.transcript.turns for r in t if r.role == "user"), "")
        query = USER_QUERY.search(first)
        prompt = (query.group(1) if query else first).strip()
        title = meta.get("name") if isinstance(meta.get("name"), str) else None
        workspace = where.get("workspace") or workspace_of(
            self.named_paths(), where.get("slug"), where.get("cwd_md5")
        )
        created = where.get("created_at")
        parent = where.get("parent")
        metadata = {
            "variants": self.transcript.form,
            "project_slug": where.get("slug"),
            "mode": meta.get("mode"),
            "order": "stored" if where.get("unordered") else None,
            "times": "none recorded" if created is None else None,
            "records": dict(sorted(self.transcript.accounting.items())) or None,
        }
        return {
            "session_id": self.session_id,
            "source_provider": PROVIDER,
            "source_session_id": self.sid,
            "label": ids.session_label(PROVIDER, self.sid),
            "title": cap((title or prompt).strip().split("\n")[0], 200) or None
            if not parent else None,
            "created_at": created,
            "updated_at": where.get("updated_at") or created,
            "model": meta.get("lastUsedModel") if isinstance(meta.get("lastUsedModel"), str)
            else None,
            "workspace_path": workspace,
            "project": re.split(r"[\\/]", workspace.rstrip("/\\"))[-1] or None
            if workspace else None,
            "entrypoint": where.get("entrypoint"),
            "is_subagent": parent is not None,
            "parent_session_id": parent and ids.session_id(PROVIDER, parent),
            "parent_source_session_id": parent,
            "task_description": cap(prompt, 2000) if parent and prompt else None,
            **dict.fromkeys(TOKEN_COLUMNS),
            "turn_count": len(self.turns),
            "message_count": len(self.messages),
            "tool_call_count": len(self.calls),
            "metadata": {k: v for k, v in metadata.items() if v},
            "source_path": where["source_path"],
        }  # fmt: skip

    def buffers(self) -> list[TableBuffer]:
        return [self.turns, self.messages, self.calls]


def slug_of(path: str) -> str:
    """The project directory name Cursor derives from a workspace path."""
    return re.sub(r"[\\/]+", "-", path.replace(":", "")).strip("-")


def workspace_of(paths: Iterable[str], slug: str | None, cwd_md5: str | None) -> str | None:
    """The workspace: the directory, among those above the paths the conversation names, whose
    slug (transcripts) or md5 (the store's directory) is the one Cursor filed it under."""
    seen: set[str] = set()
    for path in paths:
        cuts = [m.start() for m in re.finditer(r"[\\/]", path) if m.start() > 0]
        for cut in (*cuts, len(path)):
            candidate = path[:cut]
            if candidate in seen:
                continue
            seen.add(candidate)
            if slug and slug_of(candidate).lower() == slug.lower():
                return candidate
            if cwd_md5 and hashlib.md5(candidate.encode()).hexdigest() == cwd_md5:
                return candidate
    return None


def _absolute_paths(text: str) -> Iterator[str]:
    """The absolute paths in text, each with its drive letter (`C:`) when it has one."""
    for match in ABSOLUTE_PATH.finditer(text):
        start = match.start()
        if start >= 2 and text[start - 1] == ":" and text[start - 2] in _DRIVES:
            start -= 2
        yield text[start : match.end()]


def _strings(value: Any) -> Iterator[str]:
    """The strings of a JSON value, depth first in document order."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            yield node
        elif isinstance(node, dict):
            stack.extend(reversed(node.values()))
        elif isinstance(node, list):
            stack.extend(reversed(node))


def _params(value: Any) -> Any:
    """Arguments as a JSON object: a freeform input (ApplyPatch's patch text) is `{"input": …}`,
    as the `.txt` variant writes it, so every variant stores the same shape."""
    if value in (None, "", {}):
        return None
    return value if isinstance(value, (dict, list)) else {"input": value}


def _text(value: Any, limit: int) -> str | None:
    if value is None or value == "":
        return None
    return cap(value if isinstance(value, str) else orjson.dumps(value).decode(), limit)
