"""A session as an OpenTelemetry trace, in OTLP JSON (one `ExportTraceServiceRequest` per
session), as a collector's `otlpjsonfile` receiver reads it: one request per line.

Spans follow the GenAI semantic conventions: the session is an `invoke_agent` span, each turn
a `chat {model}` span (a model call, with its token usage), each tool call an `execute_tool
{name}` span under its turn. `gen_ai.usage.input_tokens` counts every input token, cached or
not, as the conventions ask; the cache reads and writes are given beside it. A subagent is a
trace of its own whose root links to the call that spawned it.

Ids are derived from the ledger's ids, so exporting a session again gives the same trace and
span ids, and a backend de-duplicates rather than doubling. OTLP JSON writes ids as hex, enums
as integers and 64-bit integers as strings.
"""

from __future__ import annotations

from typing import Any

import xxhash

from tracehouse import __version__
from tracehouse.timespec import parse_stored

Row = dict[str, Any]
SPAN_KIND_INTERNAL, SPAN_KIND_CLIENT = 1, 3
STATUS_UNSET, STATUS_ERROR = 0, 2
SCOPE = {"name": "tracehouse", "version": __version__}


def has_time(session: Row) -> bool:
    """Whether a session can be a trace: a span needs a time, and a session whose agent recorded
    none (the Cursor agent's transcripts) has no time a file's could stand for."""
    return bool(session.get("created_at") or session.get("updated_at"))


def trace_request(detail: dict[str, Any]) -> dict[str, Any]:
    """The session's OTLP trace (of a session that `has_time`)."""
    s = detail["session"]
    trace = trace_id(s["session_id"])
    start, end = _nanos(s.get("created_at")), _nanos(s.get("updated_at"))
    end = max(end, start)
    root = span_id(s["session_id"])
    root_span: Row = {
        "traceId": trace,
        "spanId": root,
        "name": f"invoke_agent {s['source_provider']}",
        "kind": SPAN_KIND_INTERNAL,
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(end),
        "attributes": _attributes(
            {
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": s["source_provider"],
                "gen_ai.agent.id": s["label"],
                "gen_ai.conversation.id": s["source_session_id"],
                "gen_ai.request.model": s.get("model"),
                "tracehouse.session.id": s["session_id"],
                "tracehouse.session.title": s.get("title"),
                "tracehouse.project": s.get("project"),
                "tracehouse.workspace_path": s.get("workspace_path"),
                "tracehouse.subagent": bool(s.get("is_subagent")),
                **_usage(s),
            }
        ),
    }
    if s.get("parent_session_id") and s.get("spawn_tool_call_id"):
        root_span["links"] = [
            {
                "traceId": trace_id(s["parent_session_id"]),
                "spanId": span_id(s["spawn_tool_call_id"]),
            }
        ]
    spans = [root_span]
    turn_spans: dict[str, str] = {}
    for turn in detail["turns"]:
        turn_spans[turn["turn_id"]] = span_id(turn["turn_id"])
        t0 = _nanos(turn.get("started_at")) or start
        t1 = max(_nanos(turn.get("completed_at")) or t0, t0)
        model = turn.get("model") or s.get("model") or "unknown"
        spans.append(
            {
                "traceId": trace,
                "spanId": turn_spans[turn["turn_id"]],
                "parentSpanId": root,
                "name": f"chat {model}",
                "kind": SPAN_KIND_CLIENT,
                "startTimeUnixNano": str(t0),
                "endTimeUnixNano": str(t1),
                "attributes": _attributes(
                    {
                        "gen_ai.operation.name": "chat",
                        "gen_ai.provider.name": turn.get("llm_provider") or s.get("llm_provider"),
                        "gen_ai.request.model": model,
                        "gen_ai.response.model": turn.get("model"),
                        "gen_ai.conversation.id": s["source_session_id"],
                        "tracehouse.turn.status": turn.get("status"),
                        **_usage(turn),
                    }
                ),
                **({"status": {"code": STATUS_ERROR}} if turn.get("status") == "error" else {}),
            }
        )
    for call in detail["tool_calls"]:
        t0 = _nanos(call.get("started_at")) or start
        t1 = max(_nanos(call.get("completed_at")) or t0, t0)
        failed = call.get("status") == "error" or bool(call.get("error"))
        spans.append(
            {
                "traceId": trace,
                "spanId": span_id(call["tool_call_id"]),
                "parentSpanId": turn_spans.get(call.get("turn_id") or "", root),
                "name": f"execute_tool {call['tool_name']}",
                "kind": SPAN_KIND_INTERNAL,
                "startTimeUnixNano": str(t0),
                "endTimeUnixNano": str(t1),
                "attributes": _attributes(
                    {
                        "gen_ai.operation.name": "execute_tool",
                        "gen_ai.tool.name": call["tool_name"],
                        "gen_ai.tool.call.id": call.get("source_tool_call_id"),
                        "tracehouse.tool.status": call.get("status"),
                    }
                ),
                "status": {"code": STATUS_ERROR, "message": (call.get("error") or "")[:500]}
                if failed
                else {"code": STATUS_UNSET},
            }
        )
    return {
        "resourceSpans": [
            {
                "resource": {
                    "attributes": _attributes(
                        {"service.name": s["source_provider"], "host.name": s.get("host")}
                    )
                },
                "scopeSpans": [{"scope": SCOPE, "spans": spans}],
            }
        ]
    }


def trace_id(ledger_id: str) -> str:
    return _nonzero(xxhash.xxh3_128_hexdigest(ledger_id.encode()), 32)


def span_id(ledger_id: str) -> str:
    return _nonzero(xxhash.xxh3_64_hexdigest(ledger_id.encode()), 16)


def _nonzero(hex_id: str, width: int) -> str:
    return hex_id if hex_id.strip("0") else "0" * (width - 1) + "1"  # an all-zero id is invalid


def _usage(row: Row) -> dict[str, Any]:
    """Token attributes of a turn or session; absent counts are left out, not written as 0."""
    cached, written = row.get("cached_input_tokens"), row.get("cache_write_tokens")
    return {
        "gen_ai.usage.input_tokens": row.get("input_tokens"),  # the cache included, as here
        "gen_ai.usage.output_tokens": row.get("output_tokens"),
        "gen_ai.usage.cache_read.input_tokens": cached,
        "gen_ai.usage.cache_creation.input_tokens": written,
        "tracehouse.usage.reasoning_tokens": row.get("reasoning_tokens"),
    }


def _attributes(values: dict[str, Any]) -> list[Row]:
    out = []
    for key, value in values.items():
        if value is None:
            continue
        if isinstance(value, bool):
            typed: Row = {"boolValue": value}
        elif isinstance(value, int):
            typed = {"intValue": str(value)}
        else:
            typed = {"stringValue": str(value)}
        out.append({"key": key, "value": typed})
    return out


def _nanos(iso: str | None) -> int:
    moment = parse_stored(iso, utc=True)
    return 0 if moment is None else int(moment.timestamp() * 1_000_000) * 1000
