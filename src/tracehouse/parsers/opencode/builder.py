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

from tracehouse.model import fields, ids
from tracehouse.model.fields import cap, iso
from tracehouse.model.rows import TableBuffer
from tracehouse.model.tokens import ledger_counts
from tracehouse.parsers.base import SHAPE_ERRORS, shape_error
from tracehouse.parsers.kit.conversation import Conversation
from tracehouse.parsers.kit.untrusted import items, token
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
        # A turn is named by its own replies' model and provider, and ends when they completed.
        self.talk = Conversation(PROVIDER, self.sid, raw.location, max_field,
                                 carry_provider=False, stated_ends=True)  # fmt: skip
        self.first_prompt: str | None = None
        self.cwd: str | None = None
        self.accounting: Counter[str] = Counter()

    def build(self) -> None:
        for message in self.raw.messages:
            try:
                self._message(message)
            except SHAPE_ERRORS as exc:  # this message is a reject; the session goes on
                self.raw.problems.append((f"message {token(message.get('id'))}", shape_error(exc)))
        self.talk.finish()

    def _message(self, message: dict[str, Any]) -> None:
        mid, role = str(message["id"]), str(message.get("role"))
        time = _dict(message.get("time"))
        at = iso(time.get("created"))
        self.accounting[f"message.{role}"] += 1
        texts: list[str] = []
        thinking: list[str] = []
        metadata = _message_metadata(message)
        tools: list[dict[str, Any]] = []
        steps: list[dict[str, Any]] = []
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
                tools.append(part)
            elif kind == "step-finish" and isinstance(part.get("tokens"), dict):
                steps.append(part)
            elif kind in ("file", "subtask", "patch", "agent", "retry", "compaction"):
                metadata.setdefault(f"{kind}s", []).append(_part_note(part))
            elif kind not in ("text", "reasoning", *QUIET_PARTS):
                metadata.setdefault("unknown_parts", []).append(kind)
        content = "\n\n".join(t.strip("\n") for t in texts)
        system = message.get("system")
        said = {"metadata": metadata or None, "context": {"system": system} if system else None}
        talk = self.talk
        if role == "user":
            message_id = talk.prompt(mid, content, at, titled=False, own_turn=True, **said)
            if content.strip() and self.first_prompt is None:
                self.first_prompt = content.strip().splitlines()[0]
        # a reply joins the turn of the prompt it names; a prompt is in its own
        with talk.answering(mid if role == "user" else str(message.get("parentID"))):
            if role == "assistant":
                message_id = self._reply(mid, message, content, thinking, at, said, steps)
            elif role != "user":  # a role of a later version: shown, not said to the model
                message_id = talk.notice(mid, content, at, metadata)
            for part in tools:
                self._tool_call(part, message_id, at)
            if isinstance(metadata.get("error"), dict):
                error = metadata["error"]
                text = ": ".join(str(v) for v in (error.get("name"), error.get("message")) if v)
                talk.notice(f"{mid}#error", text, at, {"notice": "error"}, ref=mid)

    def _reply(
        self,
        mid: str,
        message: dict[str, Any],
        content: str,
        thinking: list[str],
        at: str | None,
        said: dict[str, Any],
        steps: list[dict[str, Any]],
    ) -> str:
        chosen = _dict(message.get("model"))
        model = message.get("modelID") or chosen.get("modelID")
        provider = message.get("providerID") or chosen.get("providerID")
        talk = self.talk
        message_id = talk.reply(mid, content, at, thinking="\n\n".join(thinking) or None,
                                model=str(model) if model else None,
                                llm_provider=str(provider) if provider else None,
                                **said)  # fmt: skip
        for step in steps or ([message] if isinstance(message.get("tokens"), dict) else []):
            cost = step.get("cost")
            priced = isinstance(cost, (int, float)) and not isinstance(cost, bool)
            talk.usage(token_columns(step["tokens"]), cost if priced else None)
        error = message.get("error")
        if isinstance(error, dict):
            talk.end_turn("aborted" if error.get("name") == "MessageAbortedError" else "error")
        path = message.get("path")
        if isinstance(path, dict) and isinstance(path.get("cwd"), str):
            self.cwd = self.cwd or path["cwd"]
        talk.end_turn(at=iso(_dict(message.get("time")).get("completed")))
        return message_id

    def _tool_call(self, part: dict[str, Any], message_id: str, at: str | None) -> None:
        state = _dict(part.get("state"))
        status = TOOL_STATUS.get(str(state.get("status")), "pending")
        times, meta = _dict(state.get("time")), _dict(state.get("metadata"))
        child = meta.get("sessionId") if part.get("tool") == "task" else None
        # callIDs repeat within a session (`functions.bash:0` on some providers); the part id
        # never does.
        key = str(part["id"])
        self.talk.call(key, str(part.get("tool") or "tool"), state.get("input"),
                       iso(times.get("start")) or at, message_id=message_id)  # fmt: skip
        # a failed call's error is what the model was given back: its result too
        # (`store/failed_calls.py`)
        output = state.get("output") or (state.get("error") if status == "failed" else None)
        self.talk.settle(key, status, result=output, error=state.get("error") or None,
                         at=iso(times.get("end")),
                         child=child if isinstance(child, str) and child else None)  # fmt: skip

    def has_content(self) -> bool:
        return self.talk.counts["messages"] > 0

    def session_row(self) -> dict[str, Any]:
        info, talk = self.raw.info, self.talk
        time = _dict(info.get("time"))
        created, updated = iso(time.get("created")), iso(time.get("updated"))
        stamps = [t for t in (created, updated, *(r["completed_at"] for r in talk.turns)) if t]
        title = info.get("title") if isinstance(info.get("title"), str) else None
        parent = info.get("parentID") if isinstance(info.get("parentID"), str) else None
        task = SUBAGENT_TITLE.match(title or "") if parent else None
        if title and PLACEHOLDER_TITLE.match(title):
            title = None
        model, provider = talk.model, talk.llm_provider
        chosen = info.get("model")
        if isinstance(chosen, dict) and isinstance(chosen.get("id"), str):
            model, provider = chosen["id"], chosen.get("providerID") or provider
        version = info.get("version")
        return talk.session_row(
            title=cap(title or self.first_prompt or "", 200) or None,
            created_at=min(stamps) if stamps else None,
            updated_at=max(stamps) if stamps else None,
            model=model,
            llm_provider=provider,
            workspace_path=info.get("directory") or self.cwd,
            tool_version=version if isinstance(version, str) else None,
            is_subagent=parent is not None,
            parent_session_id=parent and ids.session_id(PROVIDER, parent),
            parent_source_session_id=parent,
            task_description=cap(task.group(1), 2000) if task else None,
            metadata=self._metadata(info, time),
            source_path=self.where["source_path"],
        )

    def _metadata(self, info: dict[str, Any], time: dict[str, Any]) -> dict[str, Any]:
        return {
            "slug": info.get("slug"),
            "project_id": info.get("projectID"),
            "generation": self.where.get("generation"),
            "summary": info.get("summary") or None,
            "share_url": info.get("share_url") or _dict(info.get("share")).get("url"),
            "agent": info.get("agent") if isinstance(info.get("agent"), str) else None,
            # OpenCode's own sum: not the steps' (`Conversation.cost`), which it may not keep
            "cost_usd": info.get("cost") or None,
            "token_rollup": self.raw.rollup or None,
            "archived_at": iso(time.get("archived")),
            "records": dict(sorted(self.accounting.items())),
        }

    def buffers(self) -> list[TableBuffer]:
        return self.talk.buffers()


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


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
