"""Lineage on PostgreSQL: parent and child sessions linked through the spawning tool call,
in the same savepoint as the rows that made the link possible (DESIGN §4). The SQLite writer
does the same in `store/sqlite/apply.py`."""

from __future__ import annotations

from collections import Counter
from typing import Any

import psycopg

# A child that names its spawning call (a Codex review knows only the parent's call) gives
# that call its `spawned_session_id`, whether the child or the parent is being written. Where
# several name one call (two reviews created at the same millisecond), the call names the one
# with the smallest id, whichever came first; a call its parent's own log linked is kept.
LINK_NAMED_CALLS = """
UPDATE tool_calls SET spawned_session_id = s.session_id,
       spawned_source_session_id = s.source_session_id
FROM (SELECT DISTINCT ON (spawn_tool_call_id) spawn_tool_call_id, session_id, source_session_id
      FROM sessions
      WHERE spawn_tool_call_id IN (
          SELECT spawn_tool_call_id FROM sessions WHERE session_id = ANY(%(ids)s)
          UNION ALL SELECT tool_call_id FROM tool_calls WHERE session_id = ANY(%(ids)s))
      ORDER BY spawn_tool_call_id, session_id COLLATE "C") AS s
WHERE s.spawn_tool_call_id = tool_calls.tool_call_id
  AND (tool_calls.spawned_session_id IS NULL
       OR (tool_calls.spawned_session_id COLLATE "C" > s.session_id COLLATE "C"
           AND EXISTS (SELECT 1 FROM sessions AS held
                       WHERE held.session_id = tool_calls.spawned_session_id
                         AND held.spawn_tool_call_id = tool_calls.tool_call_id)))
RETURNING s.session_id, tool_calls.session_id
"""

# Each child that names its call takes its parent message from it, the one the call names and
# the others alike.
LINK_NAMED_MESSAGES = """
UPDATE sessions SET parent_message_id = tc.message_id,
       parent_source_message_id = m.source_message_id
FROM tool_calls AS tc LEFT JOIN messages AS m ON m.message_id = tc.message_id
WHERE tc.tool_call_id = sessions.spawn_tool_call_id
  AND tc.session_id = sessions.parent_session_id
  AND (sessions.session_id = ANY(%(ids)s) OR sessions.parent_session_id = ANY(%(ids)s))
  AND (sessions.parent_message_id IS DISTINCT FROM tc.message_id
       OR sessions.parent_source_message_id IS DISTINCT FROM m.source_message_id)
RETURNING sessions.session_id, tc.session_id
"""

# Lineage from the spawning tool calls, whichever of parent and child arrived first: for every
# child spawned from these sessions, and for these sessions as children, the first spawning call.
RESOLVE_LINKS = """
WITH spawns AS (
    SELECT DISTINCT ON (tc.spawned_session_id) tc.spawned_session_id, tc.session_id,
           tc.message_id, tc.tool_call_id, tc.source_tool_call_id,
           parent.source_session_id, m.source_message_id
    FROM tool_calls AS tc
    JOIN sessions AS child ON child.session_id = tc.spawned_session_id
    JOIN sessions AS parent ON parent.session_id = tc.session_id
    LEFT JOIN messages AS m ON m.message_id = tc.message_id
    WHERE tc.spawned_session_id IN (
        SELECT spawned_session_id FROM tool_calls
        WHERE session_id = ANY(%(ids)s) AND spawned_session_id IS NOT NULL
        UNION ALL SELECT unnest(%(ids)s::text[]))
      -- a child that names its parent takes its link from that parent's calls only
      AND coalesce(child.parent_session_id, tc.session_id) = tc.session_id
    ORDER BY tc.spawned_session_id, tc.tool_call_id COLLATE "C"
)
UPDATE sessions SET parent_session_id = sp.session_id, parent_message_id = sp.message_id,
       spawn_tool_call_id = sp.tool_call_id, parent_source_session_id = sp.source_session_id,
       parent_source_message_id = sp.source_message_id,
       spawn_source_tool_call_id = sp.source_tool_call_id
FROM spawns AS sp
WHERE sessions.session_id = sp.spawned_session_id
  AND (sessions.parent_session_id IS DISTINCT FROM sp.session_id
       OR sessions.parent_message_id IS DISTINCT FROM sp.message_id
       OR sessions.spawn_tool_call_id IS DISTINCT FROM sp.tool_call_id
       OR sessions.spawn_source_tool_call_id IS DISTINCT FROM sp.source_tool_call_id)
RETURNING sessions.session_id, sp.session_id
"""


def resolve_links(cur: psycopg.Cursor[Any], session_ids: list[str], found: Counter[str]) -> None:
    """Link the sessions just written to their parents and children, in the group's savepoint;
    each link changed counts as a row written by the session it was written for."""
    written_here = set(session_ids)
    # each returns (child, parent) per row changed
    for sql in (LINK_NAMED_CALLS, LINK_NAMED_MESSAGES, RESOLVE_LINKS):
        cur.execute(sql, {"ids": session_ids})
        for child, parent in cur.fetchall():
            found[child if child in written_here else parent] += 1
