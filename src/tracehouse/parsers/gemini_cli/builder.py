"""A Gemini CLI conversation → ledger rows (README.md here has the mapping, record by record).

Each `user` message opens a turn; the `gemini` replies after it belong to that turn, each a
message whose thoughts are its thinking and whose tool calls are the turn's calls. `info`,
`warning` and `error` notices are the CLI's own words: `host` messages (system role). Tokens are
per reply and not cumulative: a turn's are its replies' sums, a session's its turns'.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from tracehouse.model import fields, ids
from tracehouse.model.fields import cap
from tracehouse.model.rows import TableBuffer, add_tokens, token_sums, turn_row
from tracehouse.model.tables import MESSAGES, TOOL_CALLS, TURNS
from tracehouse.model.titles import first_line, prompt_title
from tracehouse.model.tokens import ledger_counts
from tracehouse.parsers.base import SHAPE_ERRORS, shape_error
from tracehouse.parsers.gemini_cli.discover import PROVIDER
from tracehouse.parsers.gemini_cli.records import Conversation
from tracehouse.parsers.untrusted import items

TOOL_STATUS = {"success": "completed", "error": "failed", "cancelled": "failed",
               "scheduled": "pending", "validating": "pending", "awaiting_approval": "pending",
               "executing": "running"}  # fmt: skip
# Gemini's TokensSummary → the ledger's columns. `cached` is part of `input` (as OpenAI counts
# it); `total` is input + output + thoughts + tool-use prompt, kept as the API reported it.
TOKEN_KEYS = ("input", "output", "cached", "thoughts", "tool")
CONTEXT_OPENING = "<session_context>"
SUBAGENT_RESULT = re.compile(r"^Subagent '([^']+)' finished")


class ConversationBuilder:
    def __init__(
        self, conv: Conversation, source_id: str, where: dict[str, Any], max_field: int
    ) -> None:
        self.conv = conv
        self.sid = self.source_session_id = source_id
        self.where = where
        location = where["source_path"]
        self.session_id = ids.session_id(PROVIDER, source_id)
        self.location = location
        self.max_field = max_field
        self.turns = TableBuffer(TURNS)
        self.messages = TableBuffer(MESSAGES)
        self.calls = TableBuffer(TOOL_CALLS)
        self.turn: dict[str, Any] | None = None
        self.turn_rows: list[dict[str, Any]] = []
        self.first_prompt: str | None = None
        self.first_line: str | None = None  # the title of last resort (titles.py)
        self.models: list[str] = []
        self.agents: list[str] = []
        self.times: list[str] = []
        self.context: list[dict[str, Any]] = []  # preambles waiting for the turn they open
        self.pending: dict[str, dict[str, Any]] = {}  # calls from parts, by id, awaiting results

    def build(self) -> None:
        for index, message in enumerate(self.conv.messages):
            try:
                self._message(message)
            except SHAPE_ERRORS as exc:  # this message is a reject; the conversation goes on
                self.conv.problems.append((f"message {message.get('id') or index}",
                                           shape_error(exc)))  # fmt: skip

    def _message(self, message: dict[str, Any]) -> None:
        mid = str(message["id"])
        kind = str(message["type"])
        at = _time(message.get("timestamp"))
        content = message.get("content")
        if kind == "user" and _answers_only(content):
            self._answered(content)  # a tool's answer sent back: its call holds it
            return
        if at:
            self.times.append(at)
        text = content_text(content)
        if kind == "user" and text.lstrip().startswith(CONTEXT_OPENING):
            self.context.append(message)  # what the CLI tells the model first: not a prompt
            return
        if kind == "user" or self.turn is None:
            self._open_turn(mid, at)
        assert self.turn is not None
        role, message_type = {"user": ("user", "user"), "gemini": ("assistant", "assistant")}.get(
            kind, ("system", "host")
        )
        model = message.get("model") if isinstance(message.get("model"), str) else None
        if model:
            self.models.append(model)
            self.turn["model"] = self.turn["model"] or model
        metadata: dict[str, Any] = {}
        if message_type == "host":
            metadata["notice"] = kind  # info, warning, error (or a type of a later version)
            if kind == "error":
                self.turn["status"] = "error"
        display = message.get("displayContent")
        if display is not None and content_text(display) != text:
            metadata["display_content"] = content_text(display)
        message_id = ids.message_id(PROVIDER, self.sid, mid)
        self.messages.add(
            {
                "message_id": message_id,
                "session_id": self.session_id,
                "turn_id": self.turn["turn_id"],
                "source_message_id": mid,
                "seq": len(self.messages),
                "role": role,
                "message_type": message_type,
                "content": cap(text, self.max_field) if text else None,
                "thinking": _thoughts(message.get("thoughts"), self.max_field)
                or _thought_parts(content, self.max_field),
                "created_at": at,
                "model": model,
                "metadata": metadata or None,
                "source_ref": f"{self.location}#{mid}",
            }
        )
        if role == "user":
            self.turn["query_message_ids"].append(message_id)
            if self.first_prompt is None:
                self.first_prompt = prompt_title(text)
            self.first_line = self.first_line or first_line(text)
        elif role == "assistant":
            self.turn["response_message_id"] = message_id
        self._tokens(message.get("tokens"))
        for call in items(message.get("toolCalls")) or _function_calls(content, at):
            self._tool_call(call, message_id, at)
        if at:
            self.turn["completed_at"] = max(filter(None, (self.turn["completed_at"], at)))

    def _open_turn(self, mid: str, at: str | None) -> None:
        parent = self.turn_rows[-1]["turn_id"] if self.turn_rows else None
        self.turn = self.turns.add(
            turn_row(PROVIDER, self.sid, mid, len(self.turns), parent, at, llm_provider="google")
        )
        self.turn_rows.append(self.turn)
        for context in self.context:
            self._context_message(context)
        self.context.clear()

    def _context_message(self, message: dict[str, Any]) -> None:
        """The `<session_context>` preamble: a system message of the first turn, before its
        prompt, as the model read it."""
        assert self.turn is not None
        mid = str(message["id"])
        text = content_text(message.get("content"))
        self.messages.add(
            {
                "message_id": ids.message_id(PROVIDER, self.sid, mid),
                "session_id": self.session_id,
                "turn_id": self.turn["turn_id"],
                "source_message_id": mid,
                "seq": len(self.messages),
                "role": "system",
                "message_type": "system",
                "content": cap(text, self.max_field),
                "created_at": _time(message.get("timestamp")),
                "metadata": {"context": "session_context"},
                "source_ref": f"{self.location}#{mid}",
            }
        )

    def _answered(self, content: Any) -> None:
        """Results of calls read from `functionCall` parts (a snapshot's replies have no
        `toolCalls`), from the `functionResponse` parts the next user message sends back."""
        for part in content:
            response = part["functionResponse"]
            call = self.pending.pop(str(response.get("id")), None)
            if call is None:
                continue
            output, error = function_response([part])
            # an error is what the model was given back: the result too (`store/failed_calls.py`)
            call["result"] = _text(output if output is not None else error, self.max_field)
            call["error"] = _text(error, self.max_field) if error else None
            call["status"] = "failed" if error else "completed"
            call["completed_at"] = call["started_at"]

    def _tokens(self, tokens: Any) -> None:
        assert self.turn is not None
        if not isinstance(tokens, dict):
            return
        counted = {k: fields.count(tokens.get(k), f"tokens.{k}") for k in TOKEN_KEYS}
        add_tokens(self.turn, token_columns(counted).items())

    def _tool_call(self, call: dict[str, Any], message_id: str, at: str | None) -> None:
        assert self.turn is not None
        key = str(call["id"])
        status = TOOL_STATUS.get(str(call.get("status")), "running")
        output, error = function_response(call.get("result"))
        display = call.get("resultDisplay")
        agent = call.get("agentId") if isinstance(call.get("agentId"), str) else None
        subagent = isinstance(display, dict) and display.get("isSubagentProgress")
        if subagent and isinstance(display.get("agentName"), str):  # type: ignore[union-attr]
            self.agents.append(display["agentName"])  # type: ignore[index]
        row = self.calls.add(
            {
                "tool_call_id": ids.tool_call_id(PROVIDER, self.sid, key),
                "session_id": self.session_id,
                "turn_id": self.turn["turn_id"],
                "message_id": message_id,
                "source_tool_call_id": key,
                "seq": len(self.calls),
                "tool_name": str(call.get("name") or "tool"),
                "params": call.get("args") if call.get("args") not in (None, "") else None,
                "result": _text(_answer(output, error, display), self.max_field),
                "status": status,
                "error": _text(error, self.max_field) if error else None,
                "spawned_session_id": ids.session_id(PROVIDER, agent) if agent else None,
                "spawned_source_session_id": agent,
                "started_at": _time(call.get("timestamp")) or at,
                "completed_at": (_time(call.get("timestamp")) or at)
                if status in ("completed", "failed") else None,
            }
        )  # fmt: skip
        if status == "running" and call.get("result") is None:
            self.pending[key] = row

    def has_content(self) -> bool:
        return len(self.messages) > 0

    def session_row(self) -> dict[str, Any]:
        meta, where = self.conv.meta, self.where
        subagent = meta.get("kind") == "subagent" or bool(where.get("child"))
        summary = meta.get("summary") if isinstance(meta.get("summary"), str) else None
        started, updated = _time(meta.get("startTime")), _time(meta.get("lastUpdated"))
        times = [t for t in (started, updated, *self.times) if t]
        directories = meta.get("directories")
        workspace = where.get("workspace") or (
            directories[0] if isinstance(directories, list) and directories else None
        )
        parent = where.get("parent_source_session_id")
        metadata = {
            "session_id": meta.get("sessionId"),
            "kind": meta.get("kind"),
            "format": where.get("format"),
            "project_hash": meta.get("projectHash"),
            "directories": directories if isinstance(directories, list) else None,
            "parent_session": where.get("parent"),
            # a subagent's summary is its JSON result, not a title
            "result": summary if subagent else None,
            "agents": sorted(set(self.agents)) or None,
            "unknown_records": dict(self.conv.unknown) or None,
        }
        return {
            "session_id": self.session_id,
            "source_provider": PROVIDER,
            "source_session_id": self.sid,
            "label": ids.session_label(PROVIDER, str(meta.get("sessionId") or self.sid)),
            "title": cap(summary or self.first_prompt or self.first_line or "", 200) or None
            if not subagent else None,
            "created_at": min(times) if times else None,
            "updated_at": max(times) if times else None,
            "model": self.models[-1] if self.models else None,
            "llm_provider": "google",
            "workspace_path": workspace,
            "project": re.split(r"[\\/]", workspace.rstrip("/\\"))[-1] or None
            if workspace else None,
            "entrypoint": "cli",
            "is_subagent": subagent,
            "parent_session_id": parent and ids.session_id(PROVIDER, parent),
            "parent_source_session_id": parent,
            "task_description": cap(self.first_prompt, 2000) if subagent and self.first_prompt
            else None,
            **self.totals(),
            "turn_count": len(self.turns),
            "message_count": len(self.messages),
            "tool_call_count": len(self.calls),
            "metadata": {k: v for k, v in metadata.items() if v not in (None, "", [])},
            "source_path": where["source_path"],
        }  # fmt: skip

    def buffers(self) -> list[TableBuffer]:
        return [self.turns, self.messages, self.calls]

    def totals(self) -> dict[str, int | None]:
        return token_sums(self.turn_rows)


def token_columns(tokens: dict[str, int]) -> dict[str, int]:
    """Gemini's TokensSummary in the ledger's convention: `input` (the prompt) holds `cached`
    but not the tool-use prompt (`tool`); `output` (candidates) leaves `thoughts` out. Input is
    prompt + tool-use prompt, output is candidates + thoughts, so their total is Gemini's."""
    counts = ledger_counts(input=tokens["input"] + tokens["tool"], output=tokens["output"],
                           cache_read=tokens["cached"], reasoning=tokens["thoughts"],
                           input_holds_cache=True, output_holds_reasoning=False)  # fmt: skip
    del counts["cache_write_tokens"]  # Gemini writes no cache: NULL, not 0
    return counts


def _answers_only(content: Any) -> bool:
    """Parts that are all `functionResponse`: what the CLI sends back after a tool ran."""
    return (
        isinstance(content, list)
        and bool(content)
        and all(isinstance(p, dict) and isinstance(p.get("functionResponse"), dict)
                for p in content)
    )  # fmt: skip


def _function_calls(content: Any, at: str | None) -> list[dict[str, Any]]:
    """A reply's `functionCall` parts as `toolCalls` entries, without result or status yet (a
    resume snapshot writes replies this way)."""
    calls = []
    for index, part in enumerate(content if isinstance(content, list) else []):
        call = part.get("functionCall") if isinstance(part, dict) else None
        if isinstance(call, dict) and isinstance(call.get("name"), str):
            calls.append({"id": str(call.get("id") or f"{call['name']}-{index}"),
                          "name": call["name"], "args": call.get("args"),
                          "timestamp": at})  # fmt: skip
    return calls


def _thought_parts(content: Any, limit: int) -> str | None:
    parts = [p["text"] for p in content if isinstance(p, dict) and p.get("thought")
             and isinstance(p.get("text"), str)] if isinstance(content, list) else []  # fmt: skip
    return cap("\n\n".join(parts), limit) if parts else None


def content_text(content: Any) -> str:
    """A PartListUnion's text: a string, a part (`{text}`), or a list of them. Parts without
    text (inline data, function calls) are left to the tool calls that hold them; thought parts
    are the message's thinking."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        text = content.get("text")
        return text if isinstance(text, str) and not content.get("thought") else ""
    if isinstance(content, list):
        return "".join(content_text(part) for part in content)
    return str(content)


def function_response(result: Any) -> tuple[Any, Any]:
    """(output, error) of a tool call's `result`, its list of Gemini `functionResponse` parts."""
    outputs, errors = [], []
    for part in result if isinstance(result, list) else [result]:
        response = part.get("functionResponse") if isinstance(part, dict) else None
        body = response.get("response") if isinstance(response, dict) else None
        if isinstance(body, dict):
            if body.get("output") is not None:
                outputs.append(body["output"])
            if body.get("error") is not None:
                errors.append(body["error"])
            if body.get("output") is None and body.get("error") is None:
                outputs.append(body)
        elif isinstance(part, dict) and isinstance(part.get("text"), str):
            outputs.append(part["text"])
    return _joined(outputs), _joined(errors)


def _joined(values: list[Any]) -> Any:
    if not values:
        return None
    if len(values) == 1:
        return values[0]
    return "\n".join(v if isinstance(v, str) else orjson.dumps(v).decode() for v in values)


def _thoughts(thoughts: Any, limit: int) -> str | None:
    if not isinstance(thoughts, list):
        return None
    parts = []
    for thought in thoughts:
        if isinstance(thought, dict):
            subject, description = thought.get("subject"), thought.get("description")
            parts.append(": ".join(str(p) for p in (subject, description) if p))
    text = "\n\n".join(p for p in parts if p)
    return cap(text, limit) if text else None


def _text(value: Any, limit: int) -> str | None:
    if value is None:
        return None
    text = value if isinstance(value, str) else orjson.dumps(value).decode()
    return cap(text, limit)


def _time(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _answer(*given: Any) -> Any:
    """What the model was given back for a call: its output, else its error (then the result
    too, `store/failed_calls.py`), else what the CLI displayed."""
    return next((value for value in given if value is not None), None)
