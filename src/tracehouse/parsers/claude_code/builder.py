"""Turns Claude Code records, in file order, into ledger rows for one session.

Turns, places, counts, title and sums are the parser kit's (`kit.turn_rows`); what is Claude
Code's own is here: messages linked by `parentUuid` (`links.py`), split assistant lines merged,
lines replayed from another transcript (`replays.py`), usage once per API response (`usage.py`),
tool results and the sources they cite (`tools.py`).

The builder is resumable: `finish()` returns what a later append needs (the kit's state, the
assistant messages more split lines may extend, the link windows, the session's aggregates), so
appended bytes are parsed alone and the rows they touch re-emitted whole: a file parsed in one
go or in any number of appends gives the same rows.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from tracehouse.model import ids
from tracehouse.model.rows import TableBuffer
from tracehouse.model.titles import first_line, prompt_title
from tracehouse.parsers.claude_code import records as rec
from tracehouse.parsers.claude_code import replays, tools
from tracehouse.parsers.claude_code.identity import Identity
from tracehouse.parsers.claude_code.links import NO_MESSAGE, Links
from tracehouse.parsers.claude_code.session import SessionAggregate, llm_provider
from tracehouse.parsers.claude_code.usage import Responses
from tracehouse.parsers.kit.turn_rows import TurnRows

PROVIDER = "claude-code"
STATE_SHAPE = 1  # 0: the builder's own turns and sums, before they were the kit's
OPEN_MESSAGES = 8  # assistant messages that later split lines may still extend


class SessionBuilder:
    def __init__(self, ident: Identity, state: dict[str, Any] | None, max_field: int) -> None:
        self.ident = ident
        self.sid = self.source_session_id = ident.source_session_id
        self.session_id = ident.session_id
        self.max_field = max_field
        self.seen_uuids: set[str] = set()
        self.ts: str | None = None  # the timestamp of the record being fed
        s = state or {}
        # A turn's end is its last line's time, whatever the message: said here, not by the kit.
        self.talk = TurnRows(PROVIDER, self.sid, ident.path, max_field, s.get("talk"),
                             carry_provider=False, stated_ends=True)  # fmt: skip
        self.responses = Responses(s.get("usage", []))
        self.open: OrderedDict[str, dict[str, Any]] = OrderedDict(s.get("open", []))
        self.links = Links(self.sid, s)
        self.prompted: bool = s.get("prompted", False)
        self.agg = SessionAggregate.from_state(s.get("session"))
        # Replays come first in a file: once a line of its own has been seen, stop looking.
        self.replaying: bool = s.get("replaying", True)
        self._replays: replays.Replays | None = None

    @property
    def turn(self) -> dict[str, Any] | None:
        """The open turn, if any."""
        return self.talk.turn

    # -- entry point ------------------------------------------------------------------------

    def feed(self, r: dict[str, Any], offset: int) -> str:
        """Consume one record; returns how it was accounted for."""
        kind = r.get("type")
        self.agg.count_record(kind, _data_type(r) if kind == "progress" else r.get("subtype"))
        handler = _CONVERSATION.get(kind)  # type: ignore[arg-type]
        uuid = r.get("uuid")
        if handler is not None and isinstance(uuid, str):
            # A line seen before in this file is a repeat: in this chunk (`seen_uuids`) or, after
            # an append, among the last LINK_WINDOW lines of the chunks before (`links`).
            seen = uuid in self.seen_uuids or uuid in self.links
            if seen or (self.replaying and self._replayed(r, uuid)):
                return "replayed"
            self.seen_uuids.add(uuid)
        self.ts = ts = self.agg.note_envelope(r)
        self.talk.seen(ts)
        if handler is not None:
            if kind == "assistant":
                self.agg.waiting = False  # the agent was at work: a prompt enqueued now waits
            disposition = handler(self, r, offset)
            if self.turn is not None and ts:
                self.turn["completed_at"] = ts  # the turn's last line so far
            return disposition
        if kind == "queue-operation":
            self.agg.note_queue(r.get("operation"), r.get("content"))
            return "folded"
        if kind in rec.SESSION_METADATA_TYPES:
            self.agg.note_session_record(r)
            return "folded"
        if kind in rec.IGNORED_TYPES:
            self._link(r, None)
            return "ignored"
        self.agg.keep_unknown(r)
        return "unknown"

    def _replayed(self, r: dict[str, Any], uuid: str) -> bool:
        """A line copied from another transcript (see replays.py); it stays with its owner."""
        if self._replays is None:
            parent = self.ident.parent_source_session_id or r.get("sessionId")
            self._replays = replays.for_unit(
                self.ident.path, self.sid, parent if self.ident.is_subagent else None
            )
        owner_message = self._replays.owner_message(r, uuid)
        if owner_message is not None:
            # a subagent's lines may not link into its parent's session
            target = NO_MESSAGE if self.ident.is_subagent else owner_message
            self.links.remember(uuid, target, self._turn_id)
            return True
        # A resumed file replays its predecessor before anything of its own; a side question
        # copies its parent's messages in between its own, so a subagent keeps looking.
        self.replaying = self.ident.is_subagent
        return False

    # -- record kinds -----------------------------------------------------------------------

    def _assistant(self, r: dict[str, Any], offset: int) -> str:
        m = _dict(r.get("message"))
        key = str(m.get("id") or r.get("uuid") or f"line:{offset}")
        model = m.get("model")
        synthetic = model == "<synthetic>"
        host = synthetic or bool(r.get("isApiErrorMessage"))
        if not host:
            self._ensure_turn(r, offset)
        entry = self.open.pop(key, None)
        if entry is None:
            entry = {
                "row": self._new_message(
                    r, offset, f"msg:{key}", "assistant", "host" if host else "assistant"
                ),
                "text": [],
                "thinking": [],
            }
        self.open[key] = entry
        while len(self.open) > OPEN_MESSAGES:
            self.open.popitem(last=False)
        row = entry["row"]
        content = m.get("content")
        blocks: list[Any] = content if isinstance(content, list) else [content]
        for block in blocks:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                self._tool_use(block, row, r)
            elif isinstance(block, dict) and block.get("type") == "thinking":
                if block.get("thinking"):
                    entry["thinking"].append(str(block["thinking"]))
            else:
                text = rec.block_text(block)
                if text:
                    entry["text"].append(text)
        row["content"] = rec.cap("\n\n".join(entry["text"]), self.max_field)
        row["thinking"] = "\n\n".join(entry["thinking"]) or None
        if model and not synthetic:
            row["model"] = self.talk.model = model
        meta = row["metadata"]
        meta["lines"] = meta.get("lines", 0) + 1
        for k in ("stop_reason",):
            if m.get(k):
                meta[k] = m[k]
        if r.get("requestId"):
            meta["request_id"] = r["requestId"]
        self.responses.count(self.turn, f"{key}|{r.get('requestId') or ''}", m.get("usage"),
                             synthetic)  # fmt: skip
        if self.turn is not None and not host:
            self.turn["response_message_id"] = row["message_id"]
            self.turn["model"] = row.get("model") or self.turn.get("model")
            self.turn["llm_provider"] = llm_provider(self.turn["model"])
            if self.turn["status"] == "error":
                self.turn["status"] = "completed"
        elif self.turn is not None and r.get("isApiErrorMessage"):
            self.turn["status"] = "error"
        self._link(r, row)
        self.talk.messages.add(dict(row))
        return "row"

    def _user(self, r: dict[str, Any], offset: int) -> str:
        m = _dict(r.get("message"))
        content = m.get("content")
        blocks = content if isinstance(content, list) else []
        results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
        text = rec.content_text(content)
        kind = rec.classify_user(r, text, bool(results))
        if kind.message_type == "user":
            self._start_turn(r, offset)
        elif kind.message_type != "host":
            self._ensure_turn(r, offset)
        row = self._new_message(
            r, offset, r.get("uuid") or f"line:{offset}", kind.role, kind.message_type
        )
        row["content"] = rec.cap(text, self.max_field)
        row["meta"] = self._attribution(r, kind, text)
        if kind.source == "interrupt" and self.turn is not None:
            self.turn["status"] = "aborted"
        if self.turn is not None and kind.message_type == "user":
            self.turn["query_message_ids"].append(row["message_id"])
        for block in results:
            self._tool_result(block, r, row)
        self._link(r, row)
        self.talk.messages.add(row)
        return "row"

    def _system(self, r: dict[str, Any], offset: int) -> str:
        subtype = r.get("subtype")
        if subtype == "turn_duration":
            if self.turn is not None:
                self.turn["metadata"]["duration_ms"] = r.get("durationMs")
            self._link(r, None)
            return "folded"
        row = self._new_message(r, offset, r.get("uuid") or f"line:{offset}", "system", "host")
        row["content"] = rec.cap(rec.system_text(r), self.max_field)
        row["metadata"].update(rec.system_metadata(r))
        # An interrupt explains what follows it: an aborted turn stays aborted.
        failed = subtype in ("api_error", "error", "api_refusal")
        if failed and self.turn is not None and self.turn["status"] != "aborted":
            self.turn["status"] = "error"
        self._link(r, row)
        self.talk.messages.add(row)
        return "row"

    def _attachment(self, r: dict[str, Any], offset: int) -> str:
        a = _dict(r.get("attachment"))
        kind = a.get("type")
        self.agg.count_attachment(kind)
        if kind in rec.FILE_ATTACHMENTS:
            source = rec.attachment_source(a)
            target = self._context_target()
            self._link(r, None)
            if source and target:
                self.talk.cite(target, source, self.ts)
                return "source"
            return "folded"
        if kind in rec.CONTEXT_ATTACHMENTS:
            prompt = a.get("prompt") if kind == "queued_command" else a.get("content")
            text = rec.content_text(prompt)
            if kind == "queued_command":
                self._ensure_turn(r, offset)
                row = self._new_message(
                    r, offset, r.get("uuid") or f"line:{offset}", "user", "user"
                )
                row["meta"] = {"source": "queued", **rec.origin(a)}
            else:
                row = self._new_message(
                    r, offset, r.get("uuid") or f"line:{offset}", "system", "system"
                )
                row["meta"] = {"source": "hook", "hook": a.get("hookName")}
            row["content"] = rec.cap(text, self.max_field)
            row["metadata"]["attachment"] = kind
            self._link(r, row)
            self.talk.messages.add(row)
            return "row"
        self._link(r, None)
        return "folded"

    # -- pieces -----------------------------------------------------------------------------

    def _new_message(
        self, r: dict[str, Any], offset: int, key: str, role: str, mtype: str
    ) -> dict[str, Any]:
        message_id = ids.message_id(PROVIDER, self.sid, key)
        # Set difference in C: most records carry no key the parser does not know.
        unknown = r.keys() - rec.KNOWN_KEYS
        extra = {k: v for k, v in r.items() if k in unknown} if unknown else None
        metadata: dict[str, Any] = {"uuid": r.get("uuid")}
        parent, unresolved = self.links.parent(r.get("parentUuid"))
        if unresolved:
            metadata["parent_unresolved"] = {"uuid": r.get("parentUuid"), "reason": unresolved}
        if r.get("isSidechain"):
            metadata["sidechain"] = True
        if extra:
            metadata["extra"] = extra
        row = {
            "message_id": message_id,
            "session_id": self.session_id,
            "turn_id": self.turn["turn_id"] if self.turn else None,
            "source_message_id": key,
            "parent_message_id": parent,
            "seq": self.talk.next_seq("messages"),
            "role": role,
            "message_type": mtype,
            "content": None,
            "thinking": None,
            "created_at": self.ts,
            "model": None,
            "meta": None,
            "metadata": metadata,
            "source_ref": f"{self.ident.path}@{offset}",
        }
        return row

    def _attribution(self, r: dict[str, Any], kind: rec.Kind, text: str) -> dict[str, Any] | None:
        meta: dict[str, Any] = {}
        if kind.source:
            meta["source"] = kind.source
        if kind.message_type == "user" and self.ident.is_subagent and not self.prompted:
            source = "workflow" if self.ident.via == "workflow" else "task"
            meta.update(source=source, source_agent_id=self._parent_session(), via=self.ident.via)
        if kind.message_type == "user":
            self.prompted = True
            # the first prompt's title, else its first line (the kit's rule, checked by `is None`
            # as ever: a prompt of tags alone leaves the title to the next one)
            if self.talk.title is None:
                self.talk.title = prompt_title(text)
            if self.talk.fallback_title is None:
                self.talk.fallback_title = first_line(text)
            if rec.cap(text, 200) in self.agg.queued:
                meta["queued"] = True
            meta.update(rec.origin(r))
        return {k: v for k, v in meta.items() if v is not None} or None

    def _parent_session(self) -> str | None:
        parent = self.ident.parent_source_session_id or self.agg.line_session_id
        return ids.session_id(PROVIDER, parent) if parent else None

    def _tool_use(self, block: dict[str, Any], message: dict[str, Any], r: dict[str, Any]) -> None:
        call = tools.new_call(block, message, self.sid, self.talk.next_seq("calls"), self.ts)
        self.talk.pending[call["source_tool_call_id"]] = self.talk.calls.add(call)

    def _tool_result(self, block: dict[str, Any], r: dict[str, Any], msg: dict[str, Any]) -> None:
        call = self.talk.pending.pop(str(block.get("tool_use_id")), None)
        if call is None:
            msg["metadata"].setdefault("orphan_tool_results", []).append(block.get("tool_use_id"))
            return
        call, sources = tools.complete(call, block, r, self.ts, self.ident.project, self.max_field)
        self.talk.calls.add(call)
        for source in sources:
            self.talk.cite(msg["message_id"], source, self.ts)

    def _context_target(self) -> str | None:
        if self.turn and self.turn["query_message_ids"]:
            return str(self.turn["query_message_ids"][0])
        return None

    def _start_turn(self, r: dict[str, Any], offset: int, *, implicit: bool = False) -> None:
        """A turn opens at a typed prompt; it continues the turn its `parentUuid` line was
        written in, which a rewind or an in-session fork makes other than the one before."""
        self.talk.open_turn(str(r.get("uuid") or f"line:{offset}"), self.ts)
        assert self.turn is not None
        self.turn["parent_turn_id"] = self.links.parent_turn(r)
        self.turn["metadata"] = {"implicit": True} if implicit else {}

    def _ensure_turn(self, r: dict[str, Any], offset: int) -> None:
        """Output before any prompt (a warm-up agent, a resumed tail) still belongs to a turn."""
        if self.turn is None:
            self._start_turn(r, offset, implicit=True)

    def _link(self, r: dict[str, Any], row: dict[str, Any] | None) -> None:
        self.links.link(r, row, self._turn_id)

    @property
    def _turn_id(self) -> str | None:
        return self.turn["turn_id"] if self.turn is not None else None

    # -- end of a parse ---------------------------------------------------------------------

    def finish(self) -> dict[str, Any]:
        """Emit the rows still open and return the resume state for the next append."""
        return {
            "talk": self.talk.finish(),
            "usage": self.responses.to_state(),
            "open": list(self.open.items()),
            **self.links.to_state(),
            "prompted": self.prompted,
            "replaying": self.replaying,
            "session": self.agg.to_state(),
        }

    def has_content(self) -> bool:
        return self.talk.counts["messages"] > 0

    def session_row(self) -> dict[str, Any]:
        return self.talk.session_row(**self.agg.row_fields(self.ident, self.talk))

    def buffers(self) -> list[TableBuffer]:
        return self.talk.buffers()


_CONVERSATION = {
    "assistant": SessionBuilder._assistant,
    "user": SessionBuilder._user,
    "system": SessionBuilder._system,
    "attachment": SessionBuilder._attachment,
}


def _data_type(r: dict[str, Any]) -> Any:
    data = r.get("data")
    return data.get("type") if isinstance(data, dict) else None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
