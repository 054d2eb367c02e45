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

from tracehouse.model import ids
from tracehouse.model.fields import cap
from tracehouse.model.rows import TableBuffer
from tracehouse.parsers.cursor_agent.discover import PROVIDER
from tracehouse.parsers.cursor_agent.transcripts import Tool, Transcript
from tracehouse.parsers.kit.conversation import Conversation

SPAWNING_TOOLS = ("task", "agent", "subagent")
USER_QUERY = re.compile(r"<user_query>\s*(.*?)\s*(?:</user_query>|$)", re.S)
WORKSPACE_LINE = re.compile(r"Workspace Path: *(\S+)")
# A path from its first separator; a drive letter before it is taken in `_absolute_paths`. Led
# by the optional drive, the pattern was tried at every character of every text scanned.
ABSOLUTE_PATH = re.compile(r"[\\/][^\s\"'`<>|*?]+")
_DRIVES = frozenset(string.ascii_letters)


class TranscriptBuilder:
    """A transcript told to the kit's `Conversation`, turn by turn at the positions it has."""

    def __init__(
        self, transcript: Transcript, source_id: str, where: dict[str, Any], max_field: int
    ) -> None:
        self.transcript = transcript
        self.sid = source_id
        self.where = where
        self.talk = Conversation(PROVIDER, source_id, where["source_path"], max_field)
        self.children = list(where.get("children") or [])  # subagents, in spawning order
        # What may name the workspace, in conversation order: (a reply's text?, text or input)
        self.naming: list[tuple[bool, Any]] = [(False, self.transcript.system or "")]

    def build(self) -> None:
        talk, system = self.talk, self.transcript.system
        for k, replies in enumerate(self.transcript.turns):
            talk.open_turn(f"t{k}", None)
            assert talk.turn is not None
            for i, reply in enumerate(replies):
                self.naming.append((True, reply.text))
                message_id = talk.message(reply.role, reply.role, f"t{k}.{i}", reply.text, None,
                                          thinking=reply.thinking,
                                          context={"system": system} if k == i == 0 and system
                                          else None)  # fmt: skip
                if reply.role == "user":
                    talk.turn["query_message_ids"].append(message_id)
                elif reply.role == "assistant":  # the turn's response is its last reply
                    talk.turn["response_message_id"] = message_id
                for j, tool in enumerate(reply.tools):
                    self._tool_call(tool, f"t{k}.{i}.{j}", message_id)
        talk.finish()

    def _tool_call(self, tool: Tool, key: str, message_id: str) -> None:
        child = None
        if tool.name.lower() in SPAWNING_TOOLS and self.children:
            child = self.children.pop(0)  # children pair with spawning calls by position
        if tool.input is not None:
            self.naming.append((False, tool.input))
        source_id = tool.id or key
        row = self.talk.call(source_id, tool.name, None, None, message_id=message_id)
        row["params"] = _params(tool.input)
        # a transcript keeps a call once it was made; only the store says what came back
        made = tool.has_result or self.transcript.form != "store"
        result = tool.result if tool.has_result and tool.result != "" else None
        self.talk.settle(source_id, "completed" if made else "pending", result=result,
                         child=child)  # fmt: skip

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
        return self.talk.has_content()

    def session_row(self) -> dict[str, Any]:
        where = self.where
        meta = where.get("store_meta") or {}
        first = next((r.text for t in self.transcript.turns for r in t if r.role == "user"), "")
        query = USER_QUERY.search(first)
        prompt = (query.group(1) if query else first).strip()
        title = meta.get("name") if isinstance(meta.get("name"), str) else None
        created = where.get("created_at")
        parent = where.get("parent")
        return self.talk.session_row(
            title=(title or prompt).strip().split("\n")[0] if not parent else None,
            created_at=created,
            updated_at=where.get("updated_at") or created,
            model=meta.get("lastUsedModel") if isinstance(meta.get("lastUsedModel"), str)
            else None,
            workspace_path=where.get("workspace") or workspace_of(
                self.named_paths(), where.get("slug"), where.get("cwd_md5")),
            entrypoint=where.get("entrypoint"),
            is_subagent=parent is not None,
            parent_session_id=parent and ids.session_id(PROVIDER, parent),
            parent_source_session_id=parent,
            task_description=cap(prompt, 2000) if parent and prompt else None,
            metadata={
                "variants": self.transcript.form,
                "project_slug": where.get("slug"),
                "mode": meta.get("mode"),
                "order": "stored" if where.get("unordered") else None,
                "times": "none recorded" if created is None else None,
                "records": dict(sorted(self.transcript.accounting.items())) or None,
            },
        )  # fmt: skip

    def buffers(self) -> list[TableBuffer]:
        return self.talk.buffers()


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
