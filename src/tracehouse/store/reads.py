"""The read side: listing sessions and loading one in full, over any store's `query`."""

from __future__ import annotations

import re
from typing import Any

import orjson

from tracehouse import validate
from tracehouse.errors import ConfigError, TracehouseError
from tracehouse.model.contract import MODES
from tracehouse.model.stored_json import decode_mapping
from tracehouse.model.tables import MESSAGES
from tracehouse.store.protocol import SessionStore

# With the provenance the gateway's list carries: where a session came from (its source id and
# workspace, the machine), when it was first and last imported, its fingerprint.
LIST_COLUMNS = (
    "session_id, label, source_provider, source_session_id, title, created_at, updated_at,"
    " model, project, workspace_path, is_subagent, parent_session_id, message_count, turn_count,"
    " tool_call_count, total_tokens, source_missing_at, task_description, host,"
    " first_imported_at, last_imported_at, fingerprint"
)


# The declared columns: a store may keep more (PostgreSQL's full-text `content_tsv`).
MESSAGE_COLUMNS = ", ".join(MESSAGES.names)


class SessionNotFound(TracehouseError):
    """No session (or not one) answers a reference. `for_agent` says it to a model over MCP,
    which has tools to call where a person has commands to type."""

    exit_code = 2

    def __init__(self, message: str, for_agent: str | None = None) -> None:
        super().__init__(message)
        self.for_agent = for_agent or message


MAX_LIST = 100_000


# `last` is the most recently changed session that is not a subagent, `last~N` the one N
# before it: a reserved word, never a label (model/labels refuses it as a hint).
_LAST = re.compile(r"^last(?:~(\d{1,6}))?$")


def find_session(store: SessionStore, ref: str) -> dict[str, Any]:
    """A session by id, label, or source session id (a unique prefix of a label will do), or
    `last` / `last~N`."""
    back = _LAST.match(ref)
    if back is not None:
        return _last(store, int(back.group(1) or 0), ref)
    rows = store.query(
        "SELECT * FROM sessions WHERE session_id = ? OR label = ? OR source_session_id = ?",
        [ref, ref, ref],
    )
    if not rows:  # a label it was shown under before another session's collided with it
        rows = store.query(
            "SELECT s.* FROM session_aliases a JOIN sessions s USING (session_id)"
            " WHERE a.alias = ?",
            [ref],
        )
    if not rows:
        rows = store.query(
            "SELECT * FROM sessions WHERE label LIKE ? OR source_session_id LIKE ? LIMIT 2",
            [f"{ref}%", f"{ref}%"],
        )
    if len(rows) != 1:
        problem = "no session matches" if not rows else "more than one session matches"
        raise SessionNotFound(
            f"{problem} {ref!r} (see `tracehouse sessions list`)",
            f"{problem} {ref!r}: call list_sessions (or search) for its label, then read_session"
            " with that label",
        )
    return rows[0]


def _last(store: SessionStore, back: int, ref: str) -> dict[str, Any]:
    rows = store.query(
        "SELECT * FROM sessions WHERE is_subagent IS NULL OR is_subagent = ?"
        " ORDER BY coalesce(updated_at, created_at) DESC, session_id DESC LIMIT 1 OFFSET ?",
        [False, back],
    )
    if not rows:
        held = store.query(
            "SELECT count(*) AS n FROM sessions WHERE is_subagent IS NULL OR is_subagent = ?",
            [False],
        )[0]["n"]
        raise SessionNotFound(
            f"{ref!r}: the ledger holds {held} session{'' if held == 1 else 's'}"
            + (f"; the oldest is last~{held - 1}" if held else "")
        )
    return rows[0]


def session_family(store: SessionStore, ref: str) -> tuple[str, ...]:
    """A session and every subagent below it, however deep."""
    found = [find_session(store, ref)["session_id"]]
    frontier = list(found)
    while frontier:
        marks = ", ".join("?" * len(frontier))
        children = [
            row["session_id"]
            for row in store.query(
                f"SELECT session_id FROM sessions WHERE parent_session_id IN ({marks})", frontier
            )
            if row["session_id"] not in found
        ]
        found.extend(children)
        frontier = children
    return tuple(found)


def session_detail(store: SessionStore, session_id: str) -> dict[str, Any]:
    """A session with its rows, children, and the labels of the sessions it names (its parent
    and the agents its messages came from), so readers show labels, not hash ids."""
    by_session = [session_id]
    detail: dict[str, Any] = {
        "session": find_session(store, session_id),
        "turns": store.query("SELECT * FROM turns WHERE session_id = ? ORDER BY seq", by_session),
        "messages": store.query(
            f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE session_id = ? ORDER BY seq",
            by_session,
        ),
        "tool_calls": store.query(
            "SELECT * FROM tool_calls WHERE session_id = ? ORDER BY seq", by_session
        ),
        "sources": store.query(
            "SELECT * FROM message_sources WHERE session_id = ? ORDER BY message_id, source_id",
            by_session,
        ),
        "children": store.query(
            f"SELECT {LIST_COLUMNS}, spawn_tool_call_id, parent_message_id"
            " FROM sessions WHERE parent_session_id = ? ORDER BY created_at, session_id",
            by_session,
        ),
    }
    named = {detail["session"]["parent_session_id"]}
    for m in detail["messages"]:
        meta, _problem = decode_mapping(m.get("meta"))
        named.add(meta.get("source_agent_id"))
    detail["labels"] = labels_of(store, [n for n in named if isinstance(n, str)])
    return detail


def unresolved_reject_units(store: SessionStore, provider: str, location: str) -> list[str]:
    """The units with an unresolved reject at `location`: a local store's `unresolved_rejects`
    (a gateway's pushers ask it over HTTP)."""
    rows = store.query(
        "SELECT unit_key FROM rejects WHERE resolved_at IS NULL AND location = ?"
        " AND source_provider = ?",
        (location, provider),
    )
    return [row["unit_key"] for row in rows]


def session_history(store: SessionStore, session_id: str) -> list[dict[str, Any]]:
    """Every import that changed the session, oldest first."""
    return store.query(
        "SELECT * FROM session_history WHERE session_id = ? ORDER BY recorded_at, history_id",
        [session_id],
    )


def labels_of(store: SessionStore, session_ids: list[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for start in range(0, len(session_ids), 500):
        chunk = session_ids[start : start + 500]
        marks = ", ".join("?" * len(chunk))
        for row in store.query(
            f"SELECT session_id, label FROM sessions WHERE session_id IN ({marks})", chunk
        ):
            found[row["session_id"]] = row["label"]
    return found


def context_messages(store: SessionStore, session_id: str) -> list[dict[str, Any]]:
    """What the model would be sent: every message except operational `host` notices."""
    return store.query(
        f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE session_id = ?"
        " AND message_type != 'host' ORDER BY seq",
        [session_id],
    )


REJECT_COLUMNS = "source_provider, unit_key, location, reason, raw_excerpt, created_at, resolved_at"


def list_rejects(
    store: SessionStore, provider: str | None = None, resolved: bool = False, limit: int = 100
) -> list[dict[str, Any]]:
    """What was refused, newest first: the unresolved rejects, or (`resolved`) those that
    later read cleanly."""
    validate.provider(provider)
    validate.count(limit, "--limit", MAX_LIST)
    where = ["resolved_at IS NOT NULL" if resolved else "resolved_at IS NULL"]
    params: list[Any] = []
    if provider:
        where.append("source_provider = ?")
        params.append(provider)
    return store.query(
        f"SELECT {REJECT_COLUMNS} FROM rejects WHERE {' AND '.join(where)}"
        " ORDER BY created_at DESC, unit_key, location LIMIT ?",
        [*params, limit],
    )


RUN_COLUMNS = (
    "run_id, mode, started_at, finished_at, imported, upserted, skipped, failed, rejects,"
    " bytes_read, rows_written, retries, retry_reasons, dedupe_hits, tail_lag_p50_ms,"
    " tail_lag_ms, error, host, redactions, source"
)


def list_runs(
    store: SessionStore, since: str | None = None, mode: str | None = None, limit: int = 20
) -> list[dict[str, Any]]:
    """Recent runs, newest first, each with its duration and throughput worked out."""
    validate.count(limit, "--limit", MAX_LIST)
    if mode is not None and mode not in MODES:
        raise ConfigError(f"--mode {mode!r}: one of {', '.join(MODES)}")
    where, params = [], []
    if since:
        where.append("started_at >= ?")
        params.append(since)
    if mode:
        where.append("mode = ?")
        params.append(mode)
    clause = f"WHERE {' AND '.join(where)}" if where else ""
    rows = store.query(
        f"SELECT {RUN_COLUMNS} FROM import_runs {clause} ORDER BY started_at DESC, run_id LIMIT ?",
        [*params, limit],
    )
    for row in rows:
        seconds = _seconds_between(row["started_at"], row["finished_at"])
        sessions = sum(row[k] or 0 for k in ("imported", "upserted", "skipped", "failed"))
        row["seconds"] = seconds
        row["sessions_per_s"] = sessions / seconds if seconds else None
        row["mb_per_s"] = (row["bytes_read"] or 0) / 1e6 / seconds if seconds else None
        row["dedupe_rate"] = (row["dedupe_hits"] or 0) / sessions if sessions else None
        row["retry_reasons"] = orjson.loads(row["retry_reasons"]) if row["retry_reasons"] else {}
        row["redactions"] = _json_counts(row["redactions"])
        row["status"] = "error" if row["error"] else "ok" if row["finished_at"] else "unfinished"
    return rows


def _json_counts(value: Any) -> dict[str, int]:
    """A JSON column of counts as SQLite (text) or PostgreSQL (parsed) hands it back."""
    if not value:
        return {}
    return orjson.loads(value) if isinstance(value, str | bytes) else dict(value)


def _seconds_between(start: str | None, end: str | None) -> float | None:
    if not start or not end:
        return None
    from datetime import datetime

    try:
        a = datetime.fromisoformat(start.replace("Z", "+00:00"))
        b = datetime.fromisoformat(end.replace("Z", "+00:00"))
    except ValueError:
        return None
    return max((b - a).total_seconds(), 0.0)
