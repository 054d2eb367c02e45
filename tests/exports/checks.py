"""What every export must satisfy, shared by the small-ledger tests and the corpus tests."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import orjson
from markdown_it import MarkdownIt

from tracehouse.store.protocol import SessionStore

# Rows as they say things, not as a store stamped them: fingerprints are recomputed on import
# (a call the store linked to its subagent keeps the fingerprint its parser gave it).
STAMPED = {"fingerprint", "host", "importer_version", "first_imported_at", "last_imported_at",
           "source_read_at", "source_missing_at"}  # fmt: skip
CONTENT = ("sessions", "turns", "messages", "tool_calls", "message_sources")


def markdown_structure_holds(store: SessionStore, path: Path, session_id: str) -> None:
    """The file parses to one title and exactly one level-2 heading per shown message (or a
    trailing `Subagents` list): nothing in a message opened a heading of its own."""
    tokens = MarkdownIt("commonmark").parse(path.read_text(encoding="utf-8"))
    headings = [
        (tok.tag, tokens[i + 1].content)
        for i, tok in enumerate(tokens)
        if tok.type == "heading_open"
    ]
    shown = store.query(
        "SELECT count(*) AS n FROM messages WHERE session_id = ? AND message_type != 'tool_result'",
        [session_id],
    )[0]["n"]
    level2 = [text for tag, text in headings if tag == "h2" and text != "Subagents"]
    assert [tag for tag, _ in headings].count("h1") == 1, path
    assert len(level2) == shown, (path, len(level2), shown)
    assert all(tag in ("h1", "h2") for tag, _ in headings), path


def same_rows(a: SessionStore, b: SessionStore) -> None:
    for table in CONTENT:
        left = [{k: _plain(v) for k, v in r.items() if k not in STAMPED} for r in a.rows(table)]
        right = [{k: _plain(v) for k, v in r.items() if k not in STAMPED} for r in b.rows(table)]
        assert len(left) == len(right), table
        for x, y in zip(left, right, strict=True):
            assert x == y, table


def _plain(value: Any) -> Any:
    """JSON columns compared as values: PostgreSQL hands them back decoded, SQLite as text."""
    if isinstance(value, str) and value[:1] in "{[":
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return value
    if isinstance(value, bool):
        return int(value)
    return value


def parse_otlp_line(line: bytes) -> Any:
    """One OTLP JSON line parsed by the OTLP protobuf schema (opentelemetry-proto), strictly:
    an unknown field or a wrong type fails. OTLP JSON differs from protobuf's JSON mapping only
    in writing trace and span ids as hex, so those are turned to base64 first."""
    from google.protobuf import json_format
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    data = orjson.loads(line)
    for resource in data["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = _b64(span[key])
                for link in span.get("links", []):
                    link["traceId"], link["spanId"] = _b64(link["traceId"]), _b64(link["spanId"])
    message = ExportTraceServiceRequest()
    json_format.Parse(orjson.dumps(data), message)
    for resource in message.resource_spans:
        for scope in resource.scope_spans:
            for span in scope.spans:
                assert len(span.trace_id) == 16 and len(span.span_id) == 8
                assert span.trace_id != bytes(16) and span.span_id != bytes(8)
                assert span.end_time_unix_nano >= span.start_time_unix_nano
                assert span.parent_span_id in (b"", *[s.span_id for s in scope.spans])
    return message


def _b64(hex_id: str) -> str:
    return base64.b64encode(bytes.fromhex(hex_id)).decode()
