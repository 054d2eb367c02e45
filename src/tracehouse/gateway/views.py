"""What the gateway's read routes and pages show, built from the ledger by the library's own
readers: the session list with its provenance, and one session as its `sessions.import` item
with its lineage, so what a client reads back is what it could have sent."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from tracehouse.model.item_json import EncodeError, encode_item
from tracehouse.reports.filters import build_session_filters, list_sessions
from tracehouse.reports.pricing import load_prices, own_prices_file
from tracehouse.store.protocol import SessionStore
from tracehouse.store.reads import find_session, labels_of, session_detail

# The list's columns, as the API names them.
_SUMMARY = {
    "label": "label",
    "sessionId": "session_id",
    "sourceProvider": "source_provider",
    "sourceSessionId": "source_session_id",
    "title": "title",
    "project": "project",
    "workspacePath": "workspace_path",
    "model": "model",
    "createdAt": "created_at",
    "updatedAt": "updated_at",
    "isSubagent": "is_subagent",
    "taskDescription": "task_description",
    "turnCount": "turn_count",
    "messageCount": "message_count",
    "toolCallCount": "tool_call_count",
    "totalTokens": "total_tokens",
    # provenance: which machine or token it came from, when it was imported, if its file is gone
    "host": "host",
    "firstImportedAt": "first_imported_at",
    "lastImportedAt": "last_imported_at",
    "sourceMissingAt": "source_missing_at",
    "fingerprint": "fingerprint",
}
_COLUMNS = ", ".join(_SUMMARY.values())


def session_filters(
    store: SessionStore,
    providers: list[str],
    project: str | None,
    since: str | None,
    until: str | None,
    subagents: bool = True,
    *,
    models: list[str] | None = None,
    machines: list[str] | None = None,
) -> Any:
    return build_session_filters(
        providers=providers or (),
        project=project or None,
        since=since or None,
        until=until or None,
        subagents=subagents,
        store=store,
        models=models or (),
        machines=machines or (),
    )


def session_summaries(
    store: SessionStore,
    providers: list[str],
    project: str | None,
    since: str | None,
    until: str | None,
    subagents: bool,
    limit: int,
    order: str = "updated",
) -> list[dict[str, Any]]:
    filters = session_filters(store, providers, project, since, until, subagents)
    ids = [row["session_id"] for row in list_sessions(store, filters, limit, order=order)]
    if not ids:
        return []
    marks = ", ".join("?" * len(ids))
    rows = {
        r["session_id"]: r
        for r in store.query(f"SELECT {_COLUMNS} FROM sessions WHERE session_id IN ({marks})", ids)
    }
    return [summary(rows[i]) for i in ids if i in rows]


def summary(row: dict[str, Any]) -> dict[str, Any]:
    out = {name: row.get(column) for name, column in _SUMMARY.items()}
    out["isSubagent"] = bool(out["isSubagent"])
    return out


def session_document(store: SessionStore, ref: str) -> dict[str, Any]:
    """The session `ref` names (label, id or source id): its item, lineage and provenance."""
    session_id = find_session(store, ref)["session_id"]
    detail = session_detail(store, session_id)
    s = detail["session"]
    try:
        item: dict[str, Any] | None = encode_item(detail)
        problem = None
    except EncodeError as exc:  # a stored link with no source id: say so, show the rest
        item, problem = None, str(exc)
    parent = s.get("parent_session_id")
    return {
        **summary(s),
        "item": item,
        "itemProblem": problem,
        "lineage": {
            "parent": labels_of(store, [parent]).get(parent) if parent else None,
            "children": [c["label"] for c in detail["children"]],
        },
    }


_LINKED = {"turn": ("turns", "turn_id"), "message": ("messages", "message_id")}


def sessions_holding(store: SessionStore, target: str, ids: list[str]) -> dict[str, str]:
    """Ledger id → its session, for those of `ids` (turns or messages) the store holds: what a
    push's links by ledger id are checked against (`push_wire.decode_push`)."""
    table, column = _LINKED[target]
    found: dict[str, str] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ", ".join("?" * len(chunk))
        sql = f"SELECT {column} AS id, session_id FROM {table} WHERE {column} IN ({marks})"
        found.update((r["id"], r["session_id"]) for r in store.query(sql, chunk))
    return found


@lru_cache(maxsize=1)
def list_prices() -> Any:
    """The prices a gateway's reports cost at: the price table with the operator's own file,
    read once per process."""
    return load_prices(own_prices_file())
