"""A Cursor database unit → one session per composer or chat tab with content (DESIGN §5).

A unit is one `state.vscdb`. Its cursor holds what a stat said of the database and its `-wal`
/ `-journal` (unchanged: not opened), the highest rowids seen, and when keys were last fully
reconciled. Its state holds, per composer, the hash of its stored values: a composer whose hash
is unchanged is not decoded again.

Which composers are looked at:
* the fast path: composers with a row whose rowid is above the last one seen, less a re-read
  window (a changed row gets a new rowid under `ON CONFLICT REPLACE`; the window covers the
  readers who saw rows updated in place);
* a full reconciliation of every composer key on the first read, with `--full`, when the rowids
  went backwards (`VACUUM`), and once RECONCILE_SECONDS have passed — then even if the files
  have not changed since the last read, as long as they changed since the last reconciliation.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Mapping
from typing import Any

from tracehouse.model.contract import Clear, ImportItem, Reject, WatermarkUpdate
from tracehouse.parsers.base import (
    SHAPE_ERRORS,
    ParseOptions,
    Unit,
    UnitResult,
    files_result,
    session_item,
    shape_error,
)
from tracehouse.parsers.cursor import records as rec
from tracehouse.parsers.cursor.builder import ConversationBuilder
from tracehouse.parsers.cursor.discover import (
    PROVIDER,
    RECONCILE_SECONDS,
    WORKSPACES,
    uri_path,
    workspace_path,
)
from tracehouse.parsers.kit.sqlite_snapshot import (
    SnapshotError,
    require_tables,
    signature,
    snapshot,
)
from tracehouse.parsers.kit.untrusted import mapping, strings

WINDOW = 400


def parse(unit: Unit, cursor: Mapping[str, Any] | None, options: ParseOptions) -> UnitResult:
    files = signature(unit.key)
    result = files_result(unit, files)
    state = dict((cursor or {}).get("state") or {})
    known: dict[str, str] = dict(state.get("composers") or {})
    parents: dict[str, str] = dict(state.get("parents") or {})
    places: dict[str, list[str | None]] = dict(state.get("places") or {})
    new_cursor: dict[str, Any] = {"files": files}
    try:
        with snapshot(unit.key, options.scratch) as conn:
            require_tables(conn, ("ItemTable", "cursorDiskKV"), "a Cursor state database")
            if unit.info.get("scope") == "global":
                conversations = _global(conn, unit, cursor, known, places, options, new_cursor)
            else:
                conversations = _workspace(conn, known, options)
                new_cursor["reconciled_at"] = options.now
    except (SnapshotError, sqlite3.DatabaseError, OSError) as exc:
        result.rejects.append(Reject(PROVIDER, unit.key, "database", f"cannot read: {exc}"))
        result.accounting["rejected"] += 1
        return result  # no watermark: read again next run
    if unit.info.get("scope") == "global":  # what was decoded again, composer by composer
        keys = [rec.GLOBAL_HEADERS] if conversations else []
        for conv in conversations:
            keys += [f"{rec.COMPOSER}{conv.source_id}", f"{rec.BUBBLE}{conv.source_id}:"]
        result.clear = Clear(PROVIDER, unit.key, keys=tuple(keys))
    else:  # a workspace database is read whole
        result.clear = Clear(PROVIDER, unit.key, keys=("",))
    where = {"source_path": unit.key, **unit.info}
    tables: dict[str, list[tuple[Any, ...]]] = {}
    for conv in conversations:  # first: a child may come before its parent
        parents.update(dict.fromkeys(_children(conv.data), conv.source_id))
    for conv in conversations:
        known[conv.source_id] = conv.digest
        try:
            item = _item(conv, {**where, **_lineage(conv.source_id, parents)}, options, tables)
        except SHAPE_ERRORS as exc:  # this composer is a reject; the database's others go on
            conv.problems.append((conv.location, shape_error(exc)))
            item = None
        for location, reason in conv.problems:
            result.rejects.append(Reject(PROVIDER, unit.key, location, reason))
            result.accounting["rejected"] += 1
        if item is None:
            result.accounting["empty"] += 1  # a draft: nothing was said in it
            continue
        result.accounting[conv.kind] += 1
        result.accounting["bubble"] += len(conv.bubbles)
        result.extra.append(item)
    result.rows = tables
    result.cursor = new_cursor
    result.watermark = WatermarkUpdate(
        PROVIDER, unit.key, new_cursor, {"composers": known, "parents": parents, "places": places}
    )
    return result


def _global(
    conn: sqlite3.Connection,
    unit: Unit,
    cursor: Mapping[str, Any] | None,
    known: dict[str, str],
    places: dict[str, list[str | None]],
    options: ParseOptions,
    new_cursor: dict[str, Any],
) -> list[rec.Conversation]:
    rowids = rec.max_rowids(conn)
    seen = (cursor or {}).get("rowids") or {}
    reconciled = float((cursor or {}).get("reconciled_at") or 0)
    full = (
        options.full
        or not cursor
        or rowids["cursorDiskKV"] < int(seen.get("cursorDiskKV", 0))
        or options.now - reconciled >= RECONCILE_SECONDS
    )
    if full:
        candidates = rec.all_composer_ids(conn)
        for gone in set(known) - set(candidates):
            del known[gone]  # deleted from the DB; its session stays in the ledger
        places.clear()  # workspaces are looked up afresh
        new_cursor["reconciled_at"] = options.now
        new_cursor["reconciled_files"] = new_cursor["files"]
    else:
        since = max(0, int(seen.get("cursorDiskKV", 0)) - WINDOW)
        candidates = sorted(rec.touched_composers(conn, since))
        new_cursor["reconciled_at"] = reconciled
        new_cursor["reconciled_files"] = (cursor or {}).get("reconciled_files")
    new_cursor["rowids"] = rowids
    changed = []
    for cid in candidates:
        raw = rec.read_composer(conn, cid)
        if raw is None or (raw.digest == known.get(cid) and not options.full):
            continue
        changed.append(rec.global_composer(raw))
    if changed:
        try:
            _attribute(conn, unit, changed, places)
        except SHAPE_ERRORS as exc:  # attribution only: the composers import without a place
            changed[0].problems.append((rec.GLOBAL_HEADERS, shape_error(exc)))
    return changed


def _workspace(
    conn: sqlite3.Connection, known: dict[str, str], options: ParseOptions
) -> list[rec.Conversation]:
    return [
        conv
        for conv in rec.workspace_conversations(conn)
        if options.full or conv.digest != known.get(conv.source_id)
    ]


def _attribute(
    conn: sqlite3.Connection,
    unit: Unit,
    conversations: list[rec.Conversation],
    places: dict[str, list[str | None]],
) -> None:
    """The workspace of each global composer: C5 names it in the global header list, C3/C4 in
    the workspace DB that lists the composer's head. What the workspace DBs said is kept in
    `places` (the unit's state), so they are opened only for composers not looked up before."""
    for cid, head in rec.heads(conn, rec.GLOBAL_HEADERS).items():
        ident = head.get("workspaceIdentifier")
        if isinstance(ident, dict):
            uri = mapping(ident.get("uri"))
            fs_path, external = uri.get("fsPath"), uri.get("external")
            path = (fs_path if isinstance(fs_path, str) and fs_path else None) or (
                uri_path(external) if isinstance(external, str) and external else None
            )
            places[cid] = [path, str(ident.get("id") or "") or None]
    wanted = {c.source_id for c in conversations} - set(places)
    if wanted:
        found = _workspace_heads(str(unit.info.get("user") or ""), wanted)
        places.update({cid: found.get(cid, [None, None]) for cid in wanted})
    for conv in conversations:
        path, workspace_id = places[conv.source_id]
        conv.workspace = (path, workspace_id)


def _workspace_heads(user: str, wanted: set[str]) -> dict[str, list[str | None]]:
    found: dict[str, list[str | None]] = {}
    base = os.path.join(user, WORKSPACES)
    try:
        entries = sorted(os.listdir(base)) if os.path.isdir(base) else []
    except OSError:
        entries = []  # attribution only; discovery reports the unreadable directory
    for entry in entries:
        db = os.path.join(base, entry, "state.vscdb")
        if not os.path.isfile(db):
            continue
        try:
            with snapshot(db) as conn:
                listed = set(rec.heads(conn, rec.WORKSPACE_COMPOSERS)) & wanted
        except (SnapshotError, sqlite3.DatabaseError, OSError):
            continue  # attribution only: the composer is imported without a workspace
        if listed:
            path = workspace_path(os.path.join(base, entry))
            found.update({cid: [path, entry] for cid in listed})
    return found


def _children(data: Mapping[str, Any]) -> list[str]:
    return [c for key in ("subComposerIds", "subagentComposerIds") for c in strings(data.get(key))]


def _lineage(source_id: str, parents: Mapping[str, str]) -> dict[str, Any]:
    parent = parents.get(source_id)
    if parent is None:
        return {}
    return {"is_child": True, "parent_source_session_id": parent}


def _item(
    conv: rec.Conversation,
    where: dict[str, Any],
    options: ParseOptions,
    tables: dict[str, list[tuple[Any, ...]]],
) -> ImportItem | None:
    builder = ConversationBuilder(conv, options.max_field)
    builder.build()
    if not builder.has_content():
        return None
    if conv.workspace is not None:
        where = {**where, "workspace": conv.workspace[0], "workspace_id": conv.workspace[1]}
    for buffer in builder.buffers():
        if len(buffer):
            tables.setdefault(buffer.table.name, []).extend(buffer.tuples())
    return session_item(
        PROVIDER, conv.source_id, builder.session_row(where), [conv.digest], options.now
    )
