"""`event_msg` records: the UI's echo of the history, plus what only events carry.

Echoes of response items (`user_message`, `agent_message`, `agent_reasoning`) are never turned
into messages a second time; a `user_message` only confirms that the prompt before it was typed.
Events carry turn boundaries, token counts, review mode, errors and tool-call outcomes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from tracehouse.model.fields import cap
from tracehouse.parsers.codex import records as rec
from tracehouse.parsers.codex import tools
from tracehouse.parsers.kit.untrusted import items

if TYPE_CHECKING:
    from tracehouse.model.rows import TableBuffer
    from tracehouse.parsers.codex.copied import CopiedHistory
    from tracehouse.parsers.codex.session import SessionAggregate
    from tracehouse.parsers.codex.turns import Turns


class EventsRollout(Protocol):
    """What the event handlers ask of the rollout being read (`builder.RolloutBuilder`)."""

    ts: str | None
    max_field: int
    turns: Turns
    agg: SessionAggregate
    copied: CopiedHistory
    pending: dict[str, dict[str, Any]]
    awaiting: dict[str, Any] | None
    review: dict[str, Any] | None
    tokens_prev: list[int] | None
    messages: TableBuffer
    tool_calls: TableBuffer

    def resolve_prompt(self, *, echoed: bool) -> None: ...

    def call_for(self, key: Any) -> dict[str, Any] | None: ...

    def open_call(self, p: dict[str, Any], key: str, offset: int) -> dict[str, Any]: ...

    def host_message(self, offset: int, text: str) -> dict[str, Any]: ...

    def new_message(
        self, offset: int, role: str, mtype: str, key: str | None = None
    ) -> dict[str, Any]: ...

    def agg_origin(self) -> str | None: ...

    def add_sources(self, found: list[dict[str, Any]]) -> None: ...


ECHOES = ("agent_message", "agent_reasoning", "agent_reasoning_raw_content", "context_compacted")
CALL_EVENTS = (
    "exec_command_end",
    "mcp_tool_call_end",
    "patch_apply_end",
    "collab_agent_spawn_end",
    "dynamic_tool_call_response",
)
# Persisted events with nothing for the ledger beyond the record count in the session metadata.
FOLDED = (
    "item_completed",
    "view_image_tool_call",
    "image_generation_end",
    "guardian_assessment",
    "thread_goal_updated",
    "thread_settings_applied",
    "sub_agent_activity",
    "undo_completed",
    "thread_rolled_back",
    "collab_waiting_end",
    "collab_close_end",
    "collab_agent_interaction_end",
    "dynamic_tool_call_request",
    "account/rateLimits/updated",
)


def is_prompt_echo(p: dict[str, Any]) -> bool:
    """The event that confirms the prompt before it was typed: `user_message`, or from 0.169
    an `item_completed` whose item is a `UserMessage`."""
    kind = p.get("type")
    if kind == "user_message":
        return True
    item = p.get("item")
    return kind == "item_completed" and isinstance(item, dict) and item.get("type") == "UserMessage"


def handle(b: EventsRollout, p: dict[str, Any], offset: int) -> str:
    kind = p.get("type")
    if is_prompt_echo(p):
        if b.awaiting is not None:
            b.resolve_prompt(echoed=True)
            return "echo"
        if b.review is not None and "asked" not in b.review and kind == "user_message":
            return _review_asked(b, p, offset)
        return "mirrored" if b.review else "echo"
    if kind in ECHOES:
        return "echo"
    if kind == "token_count":
        return _tokens(b, p, offset)
    if kind == "task_started":
        b.turns.task_started(p, offset)
        return "folded"
    if kind == "task_complete":
        b.turns.task_complete(p)
        return "folded"
    if kind == "turn_aborted":
        b.turns.abort(p.get("reason"))
        return "folded"
    if kind in CALL_EVENTS:
        call = b.call_for(p.get("call_id") or p.get("callId"))
        if call is None:
            return "folded"
        tools.apply_event(call, p, b.ts, b.max_field)
        b.tool_calls.add(call)
        return "amended"
    if kind == "web_search_end":
        b.add_sources(_search_results(p))
        return "source"
    if kind == "entered_review_mode":
        return _review_started(b, p, offset)
    if kind == "exited_review_mode":
        return _review_ended(b, p)
    if kind == "error":
        row = b.host_message(offset, str(p.get("message") or "error"))
        row["metadata"]["error"] = {k: v for k, v in p.items() if k != "type"}
        if b.turns.current is not None:
            b.turns.current["status"] = "error"
        b.messages.add(row)
        return "row"
    if kind == "thread_name_updated" and isinstance(p.get("thread_name"), str):
        b.agg.title_event = p["thread_name"]
        return "folded"
    if kind in FOLDED:
        return "folded"
    b.agg.keep_unknown({"type": "event_msg", "payload": p})
    return "unknown"


def _tokens(b: EventsRollout, p: dict[str, Any], offset: int) -> str:
    delta, b.tokens_prev = rec.token_delta(b.tokens_prev, p.get("info"))
    if delta is None:
        return "folded"  # a re-emitted snapshot, or rate limits only
    if b.review is not None:
        b.agg.mirrored_token_events += 1  # the review child's usage, counted in its own file
        return "mirrored"
    if b.copied.active:
        b.agg.replayed += 1  # the source thread's usage, copied into this rollout
        return "replayed"
    b.turns.add_tokens(delta, offset)
    return "tokens"


def _review_started(b: EventsRollout, p: dict[str, Any], offset: int) -> str:
    """A review runs in a child thread; the parent keeps it as a `review` tool call."""
    key = f"review:{offset}"
    call = b.open_call({"type": "review_call", "name": "review"}, key, offset)
    call["params"] = {k: p[k] for k in ("target", "user_facing_hint") if k in p}
    b.review = {"key": key}
    return "review"


def _review_asked(b: EventsRollout, p: dict[str, Any], offset: int) -> str:
    """The review's request (`Review the code changes against …`), which the parent holds only
    as events: the review turn's prompt, and the message its `review` call — and so the
    child — hangs from. Real logs repeat it; the repeats are the child's, mirrored."""
    assert b.review is not None
    call = b.pending.get(b.review["key"])
    row = b.new_message(offset, "user", "user")
    row["content"] = cap(str(p.get("message") or ""), b.max_field)
    row["meta"] = {"source": "review", "origin": b.agg_origin()}
    b.review["asked"] = row["message_id"]
    if call is not None:
        row["turn_id"] = call["turn_id"]
        call["message_id"] = row["message_id"]
        b.tool_calls.add(call)
    turn = b.turns.current
    if turn is not None and turn["turn_id"] == row["turn_id"]:
        turn["query_message_ids"].append(row["message_id"])
    b.messages.add(row)
    return "row"


def _review_ended(b: EventsRollout, p: dict[str, Any]) -> str:
    review, b.review = b.review, None
    call = b.pending.pop(review["key"], None) if review else None
    if call is None:
        return "folded"
    output = p.get("review_output")
    call["result"] = cap(_review_text(output), b.max_field)
    call["status"] = "completed" if output is not None else "failed"
    call["completed_at"] = b.ts
    b.tool_calls.add(call)
    return "review"


def _review_text(output: Any) -> str:
    if not isinstance(output, dict):
        return "" if output is None else str(output)
    lines = [str(output.get("overall_explanation") or "")]
    for finding in items(output.get("findings")):
        if isinstance(finding, dict):
            lines.append(f"- {finding.get('title', '')}: {finding.get('body', '')}")
    return "\n".join(line for line in lines if line)


def _search_results(p: dict[str, Any]) -> list[dict[str, Any]]:
    found = tools.web_sources(p.get("action"))
    for result in items(p.get("results")):
        if isinstance(result, dict) and isinstance(result.get("url"), str):
            found.append(
                {
                    "source_type": "web_page",
                    "uri": result["url"],
                    "title": result.get("title"),
                    "content_preview": result.get("snippet"),
                    "metadata": None,
                }
            )
    return found
