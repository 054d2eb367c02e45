"""An OpenCode session → ledger rows (README.md here has the mapping, record by record).

Each user message opens a turn; an assistant message joins the turn of the user message it
answers (`parentID`), else the latest. A message's `text` parts are its content, `reasoning` parts
its thinking, `tool` parts its tool calls. Tokens are per model call and not cumulative: each
`step-finish` part is one call's usage, so a message's tokens are its steps' sums. The message's
own `tokens` are used only when it has no step parts (a reply aborted before its step finished,
Gen 0's error replies): some versions overwrite them with the last step's usage instead of
adding, so they undercount a reply of several steps. `input` excludes cache reads and writes
(OpenCode subtracts them), so the four are disjoint and `total`, when a record has none, is their
sum with reasoning. Gen 2's session token columns are kept in metadata, not used: sessions
migrated from JSON have them at 0.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import orjson

from tracehouse.model import fields, ids
from tracehouse.model.fields import cap, iso
from tracehouse.model.rows import TableBuffer, add_tokens, token_sums, turn_row
from tracehouse.model.tables import MESSAGES, TOOL_CALLS, TURNS
from tracehouse.model.tokens import ledger_counts
from tracehouse.parsers.base import SHAPE_ERRORS, shape_error
from tracehouse.parsers.kit.untrusted import items
from tracehouse.parsers.opencode.discover import PROVIDER
from tracehouse.parsers.opencode.records import RawSession

TOOL_STATUS = {"completed": "completed", "error": "failed", "pending": "pending",
               "running": "running"}  # fmt: skip
PLACEHOLDER_TITLE = re.compile(r"^(New session|Child session) - \d{4}-\d\d-\d\dT")
SUBAGENT_TITLE = re.compile(r"^(.*) \(@([\w-]+) subagent\)$", re.S)
# Parts that carry no conversation: step boundaries (their tokens are the message's), the git
# snapshot a step started from, and the files a step changed (kept as the message's `patches`).
QUIET_PARTS = ("step-start", "step-finish", "snapshot")


class SessionBuilder:
    def __init__(self, raw: RawSession, where: dict[str, Any], max_field: int) -> None:
        self.raw = raw
        self.where = where
        self.sid = str(raw.info["id"])
        self.session_id = ids.session_id(PROVIDER, self.sid)
        self.max_field = max_field
        self.turns = TableBuffer(TURNS)
        self.messages = TableBuffer(MESSAGES)
        self.calls = TableBuffer(TOOL_CALLS)
        self.turn: dict[str, Any] | None = None
        self.turn_of: dict[str, dict[str, Any]] = {}  # user message id → its turn
        self.turn_rows: list[dict[str, Any]] = []
        self.first_prompt: str | None = None
        self.models: list[tuple[str, str | None]] = []
        self.cwd: str | None = None
        self.accounting: Counter[str] = Counter()

    def build(self) -> None:
        for message in self.raw.messages:
            try:
                self._message(message)
            except SHAPE_ERRORS as exc:  # this message is a reject; the session goes on
                self.raw.problems.append((f"message {message.get('id')}", shape_error(exc)))

    def _message(self, message: dict[str, Any]) -> None:
        mid, role = str(message["id"]), str(message.get("role"))
        time = _dict(message.get("time"))
        at = iso(time.get("created"))
        if role == "user" or self.turn is None:
            self._open_turn(mid, at)
        turn = self.turn_of.get(str(message.get("parentID")), self.turn)
        assert turn is not None
        self.accounting[f"message.{role}"] += 1
        texts: list[str] = []
        thinking: list[str] = []
        metadata = _message_metadata(message)
        message_id = ids.message_id(PROVIDER, self.sid, mid)
        step_tokens: list[dict[str, Any]] = []
        for part in items(message.get("parts")):
            kind = str(part.get("type"))
            self.accounting[f"part.{kind}"] += 1
            text = part.get("text") if isinstance(part.get("text"), str) else None
            if kind == "text" and text:
                (metadata.setdefault("synthetic", []) if part.get("synthetic") else texts).append(
                    text
                )
            elif kind == "reasoning" and text:
                thinking.append(text)
            elif kind == "tool":
                self._tool_call(part, turn, message_id, at)
            elif kind == "step-finish" and isinstance(part.get("tokens"), dict):
                step_tokens.append(part)
            elif kind in ("file", "subtask", "patch", "agent", "retry", "compaction"):
                metadata.setdefault(f"{kind}s", []).append(_part_note(part))
            elif kind not in ("text", "reasoning", *QUIET_PARTS):
                metadata.setdefault("unknown_parts", []).append(kind)
        content = "\n\n".join(t.strip("\n") for t in texts)
        chosen = _dict(message.get("model"))
        model = message.get("modelID") or chosen.get("modelID")
        provider = message.get("providerID") or chosen.get("providerID")
        if role == "assistant":
            if model:
                self.models.append((str(model), provider and str(provider)))
                turn["model"] = str(model)
                turn["llm_provider"] = provider and str(provider)
            self._tokens(turn, message, step_tokens)
            turn["response_message_id"] = message_id
            error = message.get("error")
            if isinstance(error, dict):
                aborted = error.get("name") == "MessageAbortedError"
                turn["status"] = "aborted" if aborted else "error"
            path = message.get("path")
            if isinstance(path, dict) and isinstance(path.get("cwd"), str):
                self.cwd = self.cwd or path["cwd"]
            done = iso(time.get("completed"))
            if done:
                turn["completed_at"] = max(filter(None, (turn["completed_at"], done)))
        elif role == "user":
            turn["query_message_ids"].append(message_id)
            if content.strip() and self.first_prompt is None:
                self.first_prompt = content.strip().splitlines()[0]
        system = message.get("system")
        self.messages.add(
            {
                "message_id": message_id,
                "session_id": self.session_id,
                "turn_id": turn["turn_id"],
                "source_message_id": mid,
                "parent_message_id": None,
                "seq": len(self.messages),
                "role": role if role in ("user", "assistant") else "system",
                "message_type": role if role in ("user", "assistant") else "host",
                "content": cap(content, self.max_field) if content else None,
                "thinking": cap("\n\n".join(thinking), self.max_field) if thinking else None,
                "created_at": at,
                "model": str(model) if model and role == "assistant" else None,
                "metadata": metadata or None,
                "context": {"system": system} if system else None,
                "source_ref": f"{self.raw.location}#{mid}",
            }
        )
        if isinstance(metadata.get("error"), dict):
            self._notice(f"{mid}#error", metadata["error"], turn, at)

    def _notice(
        self, key: str, error: dict[str, Any], turn: dict[str, Any], at: str | None
    ) -> None:
        """A reply's error as the words OpenCode showed: a `host` message after the reply."""
        text = ": ".join(str(v) for v in (error.get("name"), error.get("message")) if v)
        self.messages.add(
            {
                "message_id": ids.message_id(PROVIDER, self.sid, key),
                "session_id": self.session_id,
                "turn_id": turn["turn_id"],
                "source_message_id": key,
                "seq": len(self.messages),
                "role": "system",
                "message_type": "host",
                "content": cap(text, self.max_field) or None,
                "created_at": at,
                "metadata": {"notice": "error"},
                "source_ref": f"{self.raw.location}#{key.split('#')[0]}",
            }
        )

    def _open_turn(self, mid: str, at: str | None) -> None:
        parent = self.turn_rows[-1]["turn_id"] if self.turn_rows else None
        self.turn = self.turns.add(turn_row(PROVIDER, self.sid, mid, len(self.turns), parent, at))
        self.turn_of[mid] = self.turn
        self.turn_rows.append(self.turn)

    def _tokens(
        self, turn: dict[str, Any], message: dict[str, Any], steps: list[dict[str, Any]]
    ) -> None:
        sources = steps or ([message] if isinstance(message.get("tokens"), dict) else [])
        for source in sources:
            add_tokens(turn, token_columns(source["tokens"]).items())
            cost = source.get("cost")
            if isinstance(cost, (int, float)) and not isinstance(cost, bool) and cost:
                meta = turn["metadata"] = turn["metadata"] or {}
                meta["cost_usd"] = round(meta.get("cost_usd", 0) + float(cost), 10)

    def _tool_call(
        self, part: dict[str, Any], turn: dict[str, Any], message_id: str, at: str | None
    ) -> None:
        state = _dict(part.get("state"))
        status = TOOL_STATUS.get(str(state.get("status")), "pending")
        times, meta = _dict(state.get("time")), _dict(state.get("metadata"))
        child = meta.get("sessionId") if part.get("tool") == "task" else None
        child = child if isinstance(child, str) and child else None
        self.calls.add(
            {
                # callIDs repeat within a session (`functions.bash:0` on some providers); the
                # part id never does.
                "tool_call_id": ids.tool_call_id(PROVIDER, self.sid, str(part["id"])),
                "session_id": self.session_id,
                "turn_id": turn["turn_id"],
                "message_id": message_id,
                "source_tool_call_id": str(part["id"]),
                "seq": len(self.calls),
                "tool_name": str(part.get("tool") or "tool"),
                "params": state.get("input") if state.get("input") not in (None, "", {}) else None,
                # a failed call's error is what the model was given back: its result too
                # (`store/failed_calls.py`)
                "result": _text(
                    state.get("output") or (state.get("error") if status == "failed" else None),
                    self.max_field,
                ),
                "status": status,
                "error": _text(state.get("error"), self.max_field),
                "spawned_session_id": ids.session_id(PROVIDER, child) if child else None,
                "spawned_source_session_id": child,
                "started_at": iso(times.get("start")) or at,
                "completed_at": iso(times.get("end")),
            }
        )

    def has_content(self) -> bool:
        return len(self.messages) > 0

    def session_row(self) -> dict[str, Any]:
        info, where = self.raw.info, self.where
        time = _dict(info.get("time"))
        created, updated = iso(time.get("created")), iso(time.get("updated"))
        stamps = [t for t in (created, updated, *(r["completed_at"] for r in self.turn_rows)) if t]
        title = info.get("title") if isinstance(info.get("title"), str) else None
        parent = info.get("parentID") if isinstance(info.get("parentID"), str) else None
        task = SUBAGENT_TITLE.match(title or "") if parent else None
        if title and PLACEHOLDER_TITLE.match(title):
            title = None
        workspace = info.get("directory") or self.cwd
        model, provider = self.models[-1] if self.models else (None, None)
        chosen = info.get("model")
        if isinstance(chosen, dict) and isinstance(chosen.get("id"), str):
            model, provider = chosen["id"], chosen.get("providerID") or provider
        metadata = {
            "slug": info.get("slug"),
            "project_id": info.get("projectID"),
            "generation": where.get("generation"),
            "summary": info.get("summary") or None,
            "share_url": info.get("share_url") or _dict(info.get("share")).get("url"),
            "agent": info.get("agent") if isinstance(info.get("agent"), str) else None,
            "cost_usd": info.get("cost") or None,
            "token_rollup": self.raw.rollup or None,
            "archived_at": iso(time.get("archived")),
            "records": dict(sorted(self.accounting.items())),
        }
        return {
            "session_id": self.session_id,
            "source_provider": PROVIDER,
            "source_session_id": self.sid,
            "label": ids.session_label(PROVIDER, self.sid),
            "title": cap(title or self.first_prompt or "", 200) or None,
            "created_at": min(stamps) if stamps else None,
            "updated_at": max(stamps) if stamps else None,
            "model": model,
            "llm_provider": provider,
            "workspace_path": workspace,
            "project": re.split(r"[\\/]", workspace.rstrip("/\\"))[-1] or None
            if isinstance(workspace, str) and workspace else None,
            "tool_version": info.get("version") if isinstance(info.get("version"), str) else None,
            "entrypoint": "cli",
            "is_subagent": parent is not None,
            "parent_session_id": parent and ids.session_id(PROVIDER, parent),
            "parent_source_session_id": parent,
            "task_description": cap(task.group(1), 2000) if task else None,
            **token_sums(self.turn_rows),
            "turn_count": len(self.turns),
            "message_count": len(self.messages),
            "tool_call_count": len(self.calls),
            "metadata": {k: v for k, v in metadata.items() if v not in (None, "", [], {})},
            "source_path": where["source_path"],
        }  # fmt: skip

    def buffers(self) -> list[TableBuffer]:
        return [self.turns, self.messages, self.calls]


def token_columns(tokens: dict[str, Any]) -> dict[str, int]:
    """OpenCode's step tokens in the ledger's convention: its `input` leaves the cache reads
    and writes out and its `output` leaves `reasoning` out; the ledger's hold them. (Its own
    `total`, where written, is the same sum.)"""
    cache = _dict(tokens.get("cache"))
    return ledger_counts(
        input=fields.count(tokens.get("input"), "tokens.input"),
        output=fields.count(tokens.get("output"), "tokens.output"),
        cache_read=fields.count(cache.get("read"), "tokens.cache.read"),
        cache_write=fields.count(cache.get("write"), "tokens.cache.write"),
        reasoning=fields.count(tokens.get("reasoning"), "tokens.reasoning"),
        input_holds_cache=False,
        output_holds_reasoning=False,
    )


def _message_metadata(message: dict[str, Any]) -> dict[str, Any]:
    metadata: dict[str, Any] = {}
    for key in ("agent", "mode", "finish"):
        if isinstance(message.get(key), str):
            metadata[key] = message[key]
    error = message.get("error")
    if isinstance(error, dict):
        data = _dict(error.get("data"))
        metadata["error"] = {"name": error.get("name"), "message": data.get("message")}
    return metadata


def _part_note(part: dict[str, Any]) -> dict[str, Any]:
    """What a file, subtask, patch, agent, retry or compaction part says, without inline data."""
    keep = ("filename", "mime", "url", "agent", "description", "prompt", "command", "name",
            "files", "hash", "attempt", "auto")  # fmt: skip
    note = {k: part[k] for k in keep if part.get(k) not in (None, "", [])}
    if isinstance(note.get("url"), str) and note["url"].startswith("data:"):
        note["url"] = note["url"][:32] + "…"  # an attachment's bytes are not the ledger's
    return note


def _text(value: Any, limit: int) -> str | None:
    if value is None or value == "":
        return None
    return cap(value if isinstance(value, str) else orjson.dumps(value).decode(), limit)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
