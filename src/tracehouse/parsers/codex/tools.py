"""Tool calls: a call item opens one, its output (joined by `call_id`) completes it.

Calls come as `function_call`, `custom_tool_call`, `local_shell_call`, `tool_search_call`,
`web_search_call` and `image_generation_call`; outputs as `*_output` items. Events add what
the history lacks: `exec_command_end` exit codes, MCP and patch results, the thread a
`spawn_agent` call started.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlparse

from tracehouse.model import ids
from tracehouse.model.fields import cap
from tracehouse.parsers.codex import records as rec

PROVIDER = rec.PROVIDER
CALL_TYPES = (
    "function_call",
    "custom_tool_call",
    "local_shell_call",
    "tool_search_call",
    "web_search_call",
    "image_generation_call",
)
OUTPUT_TYPES = ("function_call_output", "custom_tool_call_output", "tool_search_output")
SPAWN_KEYS = ("new_thread_id", "thread_id", "agent_id", "child_thread_id")


def new_call(
    p: dict[str, Any],
    *,
    key: str,
    sid: str,
    session_id: str,
    turn_id: str | None,
    message_id: str | None,
    seq: int,
    ts: str | None,
) -> dict[str, Any]:
    kind = p.get("type")
    name = str(p.get("name") or kind.removesuffix("_call") if isinstance(kind, str) else "?")
    if kind == "function_call":
        params: Any = rec.parse_arguments(p.get("arguments"))
        if p.get("namespace"):
            name = f"{p['namespace']}.{name}"
    elif kind == "custom_tool_call":
        params = {"input": p.get("input")}
    elif kind == "tool_search_call":
        params = p.get("arguments")
    elif kind in ("local_shell_call", "web_search_call"):
        params = p.get("action")
    else:
        params = {k: p.get(k) for k in ("revised_prompt",) if p.get(k)} or None
    status = p.get("status")
    done = kind in ("web_search_call", "image_generation_call")
    return {
        "tool_call_id": ids.tool_call_id(PROVIDER, sid, key),
        "session_id": session_id,
        "turn_id": turn_id,
        "message_id": message_id,
        "source_tool_call_id": key,
        "seq": seq,
        "tool_name": name or "?",
        "params": params,
        "result": None,
        "status": _status(status) if done else "pending",
        "error": None,
        "spawned_session_id": None,
        "started_at": ts,
        "completed_at": ts if done else None,
    }


def complete(call: dict[str, Any], p: dict[str, Any], ts: str | None, limit: int) -> None:
    """Join an output item to its call (in place)."""
    output = p.get("output") if "output" in p else p.get("tools")
    text = rec.output_text(output)
    call["result"] = cap(text, limit)
    call["completed_at"] = ts
    code = rec.exit_code(output)
    if code is not None:
        call["metadata"] = {**(call.get("metadata") or {}), "exit_code": code}
    failed = p.get("status") == "failed" or (code is not None and code != 0)
    if code is not None and code != 0:
        call["error"] = f"exit code {code}"
    call["status"] = "failed" if failed else "completed"
    if call["tool_name"].endswith("spawn_agent"):
        child = spawned_thread(output)
        if child:
            call["spawned_session_id"] = ids.session_id(PROVIDER, child)
            call["spawned_source_session_id"] = child


def apply_event(call: dict[str, Any], p: dict[str, Any], ts: str | None, limit: int) -> None:
    """Fold an `*_end` event about a call into it (in place)."""
    kind = p.get("type")
    if kind == "exec_command_end":
        code = p.get("exit_code")
        if isinstance(code, int) and not isinstance(code, bool):
            call["metadata"] = {**(call.get("metadata") or {}), "exit_code": code}
        if isinstance(code, int) and code != 0:
            call["status"], call["error"] = "failed", f"exit code {code}"
        if call["result"] is None and isinstance(p.get("aggregated_output"), str):
            call["result"] = cap(p["aggregated_output"], limit)
    elif kind == "mcp_tool_call_end":
        result = p.get("result")
        if isinstance(result, dict) and "Err" in result:
            call["status"], call["error"] = "failed", cap(str(result["Err"]), limit)
        elif isinstance(result, dict) and isinstance(result.get("Ok"), dict):
            ok = result["Ok"]
            call["result"] = call["result"] or cap(rec.output_text(ok.get("content")), limit)
            call["status"] = "failed" if ok.get("isError") else "completed"
    elif kind == "patch_apply_end" and p.get("success") is False:
        call["status"], call["error"] = "failed", cap(str(p.get("stderr") or "patch failed"), limit)
    elif kind == "collab_agent_spawn_end" and isinstance(p.get("new_thread_id"), str):
        call["spawned_session_id"] = ids.session_id(PROVIDER, p["new_thread_id"])
        call["spawned_source_session_id"] = p["new_thread_id"]
    if call["completed_at"] is None:
        call["completed_at"] = ts


def spawned_thread(output: Any) -> str | None:
    data = rec.parse_arguments(output) if isinstance(output, str) else output
    if isinstance(data, dict):
        for key in SPAWN_KEYS:
            value = data.get(key)
            if isinstance(value, str) and rec.thread_id_of(value):
                return value
    return None


def web_sources(action: Any, preview: Any = None) -> list[dict[str, Any]]:
    """A web search's queries and opened pages, as message sources."""
    if not isinstance(action, dict):
        return []
    found: list[dict[str, Any]] = []
    queries = action.get("queries") or ([action["query"]] if action.get("query") else [])
    for query in queries:
        if isinstance(query, str) and query:
            found.append(_source("web_search", f"search:{query}", query, preview))
    url = action.get("url")
    if isinstance(url, str) and url:
        host = urlparse(url).netloc or None
        found.append(_source("web_page", url, host, action.get("pattern")))
    return found


def _source(kind: str, uri: str, title: Any, preview: Any) -> dict[str, Any]:
    return {
        "source_type": kind,
        "uri": uri,
        "title": title,
        "content_preview": preview if isinstance(preview, str) else None,
        "metadata": None,
    }


def _status(status: Any) -> str:
    if status in ("failed", "incomplete"):
        return "failed"
    if status == "in_progress":
        return "running"
    return "completed"
