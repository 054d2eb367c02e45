"""Turns Codex rollout records, in file order, into ledger rows for one thread.

Turns, places, counts, title and token sums are the parser kit's (`kit.turn_rows`). Resumable
like the Claude builder: the state carries the kit's (the open turn, calls waiting for their
output), reasoning waiting for its assistant message, a prompt waiting for its echo, the last
token total and the session aggregate, so an appended (resumed) turn is parsed alone.
"""

from __future__ import annotations

from typing import Any

from tracehouse.model import ids
from tracehouse.model.fields import cap
from tracehouse.model.rows import TableBuffer
from tracehouse.model.titles import first_line, prompt_title
from tracehouse.parsers.codex import events, tools
from tracehouse.parsers.codex import records as rec
from tracehouse.parsers.codex.context import RolloutContext
from tracehouse.parsers.codex.copied import CopiedHistory
from tracehouse.parsers.codex.session import SessionAggregate
from tracehouse.parsers.codex.turns import Turns
from tracehouse.parsers.kit.turn_rows import TurnRows

PROVIDER = rec.PROVIDER
STATE_SHAPE = 1  # 0: the builder's own turns and sums, before they were the kit's
RECENT_CALLS = 32  # completed calls a late `*_end` event may still amend
ENVELOPES = ("session_meta", "response_item", "event_msg", "turn_context", "compacted")
# Top-level records counted and folded. 0.169's `token_usage_record` repeats the usage the
# `token_count` event beside it carries: counting both would count every response twice.
FOLDED_TOP = ("world_state", "inter_agent_communication", "inter_agent_communication_metadata",
              "token_usage_record")  # fmt: skip
FOLDED_ITEMS = ("ghost_snapshot", "compaction", "context_compaction")
G1_ITEMS = ("message", "reasoning", *tools.CALL_TYPES, *tools.OUTPUT_TYPES)


class RolloutBuilder:
    def __init__(self, ctx: RolloutContext, state: dict[str, Any] | None, max_field: int) -> None:
        self.ctx = ctx
        self.max_field = max_field
        s = state or {}
        self.agg = SessionAggregate.from_state(s.get("session"))
        self.fixed_sid: str | None = s.get("sid")
        # A turn ends at its last record's time, whatever it was: said here, not by the kit.
        self.talk = TurnRows(PROVIDER, self.source_session_id, ctx.path, max_field,
                             s.get("talk"), carry_provider=False, stated_ends=True)  # fmt: skip
        self.messages, self.tool_calls = self.talk.messages, self.talk.calls
        self.pending = self.talk.pending  # calls waiting for their output
        self.turns = Turns(self, s)
        self.recent: dict[str, dict[str, Any]] = dict(s.get("recent", []))
        self.thinking: list[str] = s.get("thinking", [])
        self.awaiting: dict[str, Any] | None = s.get("awaiting")
        self.tokens_prev: list[int] | None = s.get("tokens_prev")
        self.review: dict[str, Any] | None = s.get("review")
        self.copied = CopiedHistory.from_state(s.get("copied"))
        self.prompted: bool = s.get("prompted", False)
        self.ts: str | None = None

    # -- identity ---------------------------------------------------------------------------

    @property
    def source_session_id(self) -> str:
        if self.fixed_sid is None:
            found = self.ctx.thread or self.agg.thread_id
            return found or f"file:{self.ctx.name}"
        return self.fixed_sid

    @property
    def session_id(self) -> str:
        return ids.session_id(PROVIDER, self.source_session_id)

    def freeze_sid(self) -> str:
        # Rows carry ids derived from the thread id: once one exists, the id cannot change.
        if self.fixed_sid is None:
            self.fixed_sid = self.source_session_id
            self.talk.name_session(self.fixed_sid)
        return self.fixed_sid

    # -- entry point ------------------------------------------------------------------------

    def feed(self, r: dict[str, Any], offset: int) -> str:
        kind = r.get("type")
        if "payload" in r and isinstance(kind, str):
            self.ts = self.agg.note_time(r.get("timestamp"))
            if "ordinal" in r or kind in FOLDED_TOP:
                self.agg.generation = "G3"
            p = r.get("payload")
            p = p if isinstance(p, dict) else {}
            enveloped = kind in ("response_item", "event_msg")
            if kind == "session_meta":
                self.agg.note_meta(p, self.ts)
            if self.copied.deciding:
                own = {"id": self.agg.thread_id, **self.agg.meta}
                self.copied.observe(kind, p, self.ts, own)
            self.agg.count(f"{kind}:{p.get('type')}" if enveloped else kind)
            echo = kind == "event_msg" and events.is_prompt_echo(p)
            if self.awaiting is not None and not echo:
                self.resolve_prompt(echoed=False)
            return self._envelope(kind, p, r, offset)
        self.agg.generation = "G1" if self.agg.generation != "G0" else "G0"
        if r.get("record_type") == "state":
            self.agg.count("state")
            return "folded"
        if kind in G1_ITEMS:
            self.agg.count(f"item:{kind}")
            return self._item(r, offset)
        if "id" in r and "timestamp" in r and kind is None:
            self.agg.count("header")
            self.agg.note_meta(r, None)
            return "folded"
        self.agg.count("unknown")
        self.agg.keep_unknown(r)
        return "unknown"

    def _envelope(self, kind: str, p: dict[str, Any], r: dict[str, Any], offset: int) -> str:
        if kind == "response_item":
            return self._item(p, offset)
        if kind == "event_msg":
            return events.handle(self, p, offset)
        if kind == "session_meta":
            return "folded"  # noted in feed: the copy tracker needs it first
        if kind == "turn_context":
            self.agg.note_turn_context(p)
            self.turns.note_context(p, offset)
            return "folded"
        if kind == "compacted":
            self.agg.compactions += 1
            history = p.get("replacement_history")
            text = p.get("message") if isinstance(p.get("message"), str) else ""
            row = self.host_message(offset, text or "Context compacted")
            row["metadata"]["compacted"] = compacted = {
                "replacement_history_items": len(history) if isinstance(history, list) else None
            }
            for key in ("window_number", "window_id", "previous_window_id"):
                if key in p:
                    compacted[key] = p[key]
            self.messages.add(row)
            return "row"
        if kind in FOLDED_TOP:
            return "folded"
        self.agg.keep_unknown(r)
        return "unknown"

    # -- response items (the model-visible history) -----------------------------------------

    def _item(self, p: dict[str, Any], offset: int) -> str:
        kind = p.get("type")
        if kind == "message":
            return self._message(p, offset)
        if kind == "reasoning":
            self.thinking.extend(_reasoning_texts(p))
            return "folded"
        if kind in tools.CALL_TYPES:
            return self._call(p, offset)
        if kind in tools.OUTPUT_TYPES:
            return self._output(p)
        if kind == "agent_message":
            row = self.new_message(offset, "user", "user")
            row["content"] = cap(rec.content_text(p.get("content"))[0], self.max_field)
            row["meta"] = {
                "source": "agent",
                "author": p.get("author"),
                "recipient": p.get("recipient"),
            }
            self.messages.add(row)
            return "row"
        if kind in FOLDED_ITEMS:
            return "folded"
        self.agg.keep_unknown({"type": "response_item", "payload": p})
        return "unknown"

    def _message(self, p: dict[str, Any], offset: int) -> str:
        role = str(p.get("role") or "")
        text, images = rec.content_text(p.get("content"))
        # A rollout `tracehouse resume` restored names each message's key in the file it was
        # first read from: imported again, it is the same message, not a second one.
        key = p.get("tracehouse_key") if isinstance(p.get("tracehouse_key"), str) else None
        if role == "assistant":
            turn = self.turns.ensure(f"line:{offset}", self.ts)
            row = self.new_message(offset, "assistant", "assistant", key)
            row["content"] = cap(text, self.max_field)
            row["thinking"] = "\n\n".join(self.thinking) or None
            self.thinking = []
            row["model"] = self.agg.model
            if p.get("phase"):
                row["metadata"]["phase"] = p["phase"]
            turn["response_message_id"] = turn["last_assistant_id"] = row["message_id"]
            self.messages.add(row)
            return "row"
        row = self.new_message(offset, "user" if role == "user" else "system", "system", key)
        row["content"] = cap(text, self.max_field)
        if images:
            row["metadata"]["images"] = images
        if role != "user" or self.agg.generation in ("G0", "G1"):
            self._classify(row, rec.prompt_kind(role, text), text)
            return "row"
        if rec.typed_by_user(p):  # 0.169 on: the item says so itself
            self._classify(row, "user", text)
            return "row"
        # G2 and later echo every typed prompt as the very next record (a user_message event,
        # from 0.169 an item_completed UserMessage).
        self.awaiting = {"row": row, "text": text}
        return "row"

    def resolve_prompt(self, *, echoed: bool) -> None:
        assert self.awaiting is not None
        row, text = self.awaiting["row"], self.awaiting["text"]
        self.awaiting = None
        kind = "user" if echoed else rec.prompt_kind("user", text)
        self._classify(row, "system" if kind == "user" and not echoed else kind, text)

    def _classify(self, row: dict[str, Any], kind: str, text: str) -> None:
        row["message_type"] = kind
        row["role"] = "user" if kind == "user" else "system"
        if kind == "user":
            self.turns.prompt(row, self.ts)
            if not self.copied.active:  # a copied prompt is the source thread's, not ours
                row["meta"] = self._attribution(text)
                self.prompted = True
                # the first prompt's title, else its first line; a prompt of tags alone
                # leaves it to the next one
                if self.talk.title is None:
                    self.talk.title = prompt_title(text)
                if self.talk.fallback_title is None:
                    self.talk.fallback_title = first_line(text)
        self.messages.add(row)

    def _attribution(self, text: str) -> dict[str, Any]:
        origin = self.agg_origin()
        # `codex exec` prompts come from a script or another program, not from a person typing
        meta: dict[str, Any] = {"source": "exec" if origin == "exec" else "typed", "origin": origin}
        parent = None if self.prompted else self.ctx.parent_of(self.agg)
        subagent = rec.subagent_kind(self.agg.meta)
        if parent:
            meta.update(source="review" if subagent == "review" else "agent",
                        source_agent_id=ids.session_id(PROVIDER, parent))  # fmt: skip
        at = self.ctx.history_prompts(self.source_session_id).get(text.strip())
        if at is not None:
            meta["history_ts"] = at
        return meta

    def agg_origin(self) -> str | None:
        return rec.origin(self.agg.meta.get("originator"), self.agg.meta.get("source"))

    # -- tool calls -------------------------------------------------------------------------

    def _call(self, p: dict[str, Any], offset: int) -> str:
        call_id = p.get("call_id")
        self.open_call(p, str(call_id) if call_id else f"line:{offset}", offset)
        if p.get("type") == "web_search_call":
            self.add_sources(tools.web_sources(p.get("action")))
        return "row"

    def open_call(self, p: dict[str, Any], key: str, offset: int) -> dict[str, Any]:
        turn = self.turns.ensure(f"line:{offset}", self.ts)
        call = tools.new_call(
            p,
            key=key,
            sid=self.freeze_sid(),
            session_id=self.session_id,
            turn_id=turn["turn_id"],
            message_id=turn.get("last_assistant_id"),
            seq=self.talk.next_seq("calls"),
            ts=self.ts,
        )
        self.tool_calls.add(call)
        if call["status"] == "pending":
            self.pending[key] = call
        else:
            self.remember(key, call)
        return call

    def _output(self, p: dict[str, Any]) -> str:
        key = str(p.get("call_id"))
        call = self.pending.pop(key, None)
        if call is None:
            self.agg.count("orphan_output")
            return "orphan"
        tools.complete(call, p, self.ts, self.max_field)
        self.tool_calls.add(call)
        self.remember(key, call)
        return "joined"

    def remember(self, key: str, call: dict[str, Any]) -> None:
        self.recent[key] = call
        while len(self.recent) > RECENT_CALLS:
            self.recent.pop(next(iter(self.recent)))

    def call_for(self, key: Any) -> dict[str, Any] | None:
        return self.pending.get(str(key)) or self.recent.get(str(key))

    # -- pieces -----------------------------------------------------------------------------

    def new_message(
        self, offset: int, role: str, mtype: str, key: str | None = None
    ) -> dict[str, Any]:
        sid = self.freeze_sid()
        key = key or f"line:{offset}"
        turn = self.turns.current
        metadata: dict[str, Any] = {}
        if self.copied.active:
            metadata["replayed_from"] = self.copied.source
        row = {
            "message_id": ids.message_id(PROVIDER, sid, key),
            "session_id": self.session_id,
            "turn_id": turn["turn_id"] if turn else None,
            "source_message_id": key,
            "parent_message_id": None,
            "seq": self.talk.next_seq("messages"),
            "role": role,
            "message_type": mtype,
            "content": None,
            "thinking": None,
            "created_at": self.ts,
            "model": None,
            "meta": None,
            "metadata": metadata,
            "source_ref": f"{self.ctx.path}@{offset}",
        }
        return row

    def host_message(self, offset: int, text: str) -> dict[str, Any]:
        row = self.new_message(offset, "system", "host")
        row["content"] = cap(text, self.max_field)
        return row

    def add_sources(self, found: list[dict[str, Any]]) -> None:
        turn = self.turns.current
        target = None
        if turn is not None:
            queries = turn.get("query_message_ids") or []
            target = turn.get("last_assistant_id") or (queries[0] if queries else None)
        if target is None:
            if found:
                self.agg.count("unattached_sources")
            return
        for source in found:
            self.talk.cite(target, source, self.ts)

    # -- end of a parse ---------------------------------------------------------------------

    def finish(self) -> dict[str, Any]:
        if self.awaiting is not None:  # its echo may come in the next append: emit it for now
            row = self.awaiting["row"]
            provisional = dict(row, message_type=rec.prompt_kind("user", self.awaiting["text"]))
            self.messages.add(provisional)
        return {
            "talk": self.talk.finish(),
            "sid": self.fixed_sid,
            **self.turns.to_state(),
            "recent": list(self.recent.items()),
            "thinking": self.thinking,
            "awaiting": self.awaiting,
            "tokens_prev": self.tokens_prev,
            "review": self.review,
            "copied": self.copied.to_state(),
            "prompted": self.prompted,
            "session": self.agg.to_state(),
        }

    def has_content(self) -> bool:
        return self.talk.counts["messages"] > 0 or self.talk.counts["calls"] > 0

    def session_row(self) -> dict[str, Any]:
        sid = self.source_session_id
        if self.fixed_sid is None:  # no row was made: the session is named as it stands now
            self.talk.name_session(sid)
        # the thread's name, else its first prompt (the kit's): never blank where one exists
        title = self.ctx.title(sid, self.agg.title_event)
        fields = self.agg.row_fields(title, self.ctx.parent_of(self.agg))
        row = self.talk.session_row(**fields)
        self.ctx.link_review(self.agg, row)
        return row

    def buffers(self) -> list[TableBuffer]:
        return self.talk.buffers()


def _reasoning_texts(p: dict[str, Any]) -> list[str]:
    found: list[str] = []
    for part in (p.get("summary"), p.get("content")):
        if isinstance(part, list):
            found.extend(str(x["text"]) for x in part if isinstance(x, dict) and x.get("text"))
    return found
