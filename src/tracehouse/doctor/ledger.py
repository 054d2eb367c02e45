"""Checks of the ledger itself: reachable, migrated, writable; pending rejects; live lag."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from tracehouse.doctor.findings import Finding
from tracehouse.errors import TracehouseError
from tracehouse.store import open_store
from tracehouse.store.protocol import SessionStore

LAG_RUNS = 20  # the live flushes whose lag is judged
LAG_WARN_MS = 60_000  # a minute from a write to its commit: the watcher is falling behind


def open_ledger(location: str) -> tuple[SessionStore | None, list[Finding]]:
    """The store as it is (not created, not migrated), and what was found opening it."""
    try:
        store = open_store(location, create=False, migrate=False)
    except TracehouseError as exc:
        fix = (
            "run `tracehouse sync backfill` to create it"
            if "no ledger here" in str(exc)
            else "check --store / TRACEHOUSE_STORE and that the server is up"
        )
        return None, [Finding("store", "fail", str(exc), fix)]
    findings = [Finding("store", "ok", f"{store.location} ({store.backend})")]
    pending = store.pending_migrations()
    if pending:
        findings.append(
            Finding(
                "schema",
                "warn",
                f"version {store.schema_version}; {len(pending)} migration(s) pending:"
                f" {', '.join(pending)}",
                "`tracehouse store migrate` (the next sync would also apply them)",
            )
        )
    else:
        findings.append(Finding("schema", "ok", f"version {store.schema_version}, up to date"))
    findings.append(_writable(store))
    return store, findings


def _writable(store: SessionStore) -> Finding:
    if store.backend == "sqlite":
        path = Path(store.location)
        blocked = [str(p) for p in (path, path.parent) if not os.access(p, os.W_OK)]
        if blocked:
            return Finding(
                "writable",
                "fail",
                f"cannot write {' or '.join(blocked)}",
                "give the user who runs tracehouse write access to the ledger and its folder",
            )
        return Finding("writable", "ok", "the ledger and its folder are writable")
    rows = store.query(
        "SELECT bool_and(has_table_privilege(t, 'INSERT, UPDATE')) AS ok FROM unnest(?::text[]) t",
        [["sessions", "messages", "watermarks", "import_runs"]],
    )
    if not rows or not rows[0]["ok"]:
        return Finding(
            "writable",
            "fail",
            "this role cannot insert and update the ledger's tables",
            "GRANT INSERT, UPDATE ON ALL TABLES IN SCHEMA … TO this role"
            " (docs/runbooks/team-postgresql.md)",
        )
    return Finding("writable", "ok", "this role may insert and update the ledger's tables")


def rejects(store: SessionStore) -> Finding:
    rows = store.query(
        "SELECT source_provider, count(*) AS n FROM rejects WHERE resolved_at IS NULL"
        " GROUP BY 1 ORDER BY 1"
    )
    if not rows:
        return Finding("rejects", "ok", "none pending")
    parts = ", ".join(f"{r['n']} {r['source_provider']}" for r in rows)
    return Finding(
        "rejects",
        "warn",
        f"{sum(int(r['n']) for r in rows)} pending ({parts})",
        "`tracehouse rejects` lists each with its file and line (docs/runbooks/poison-payload.md)",
    )


def live_lag(store: SessionStore) -> Finding:
    rows = store.query(
        "SELECT tail_lag_p50_ms AS p50, tail_lag_ms AS most FROM import_runs"
        " WHERE mode = 'live' AND tail_lag_ms IS NOT NULL ORDER BY started_at DESC LIMIT ?",
        [LAG_RUNS],
    )
    if not rows:
        return Finding("live lag", "ok", "no live flushes recorded (`sync live` not running here)")
    p50s = sorted(int(r["p50"] or 0) for r in rows)
    most = max(int(r["most"]) for r in rows)
    detail = (
        f"last {len(rows)} flushes: median {p50s[(len(p50s) - 1) // 2]:,} ms, largest {most:,} ms"
    )
    if most > LAG_WARN_MS:
        return Finding(
            "live lag",
            "warn",
            detail,
            "see `tracehouse runs --mode live` for retries; a locked ledger or a slow disk delays"
            " commits (docs/runbooks/live-service.md)",
        )
    return Finding("live lag", "ok", detail)


def vectors(store: SessionStore, wanted: str) -> Finding:
    """The model of the ledger's vectors against the settings', their count and the rows that
    wait for them."""
    name = "search by meaning"
    if wanted == "none":
        return Finding(name, "ok", 'off (embeddings = "none"): search is lexical')
    held = store.embedding_status()
    detail = (
        f"{held.model or 'no vectors yet'} · {held.vectors:,} vectors for {held.passages:,}"
        f" passages · {held.backlog:,} rows waiting"
    )
    if held.model is not None and held.model != wanted:
        return Finding(
            name, "warn", detail, f"the settings name {wanted}: `tracehouse index embeddings`"
        )
    if held.backlog:
        return Finding(name, "warn", detail, "`tracehouse sync` or `tracehouse index embeddings`")
    return Finding(name, "ok", detail)


def last_success(store: SessionStore) -> str | None:
    """When the last run that read the sources finished without an error (ISO time)."""
    rows: list[dict[str, Any]] = store.query(
        "SELECT max(finished_at) AS at FROM import_runs"
        " WHERE mode IN ('backfill', 'live') AND error IS NULL AND finished_at IS NOT NULL"
    )
    return rows[0]["at"] if rows else None
