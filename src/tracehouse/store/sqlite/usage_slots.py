"""The usage rollup the SQLite writer keeps (DESIGN §11): the turns' tokens summed by quarter hour
of UTC, agent, model and whether the session is a subagent's, so that a usage report reads a row
per quarter hour and model, not every turn (`reports/usage.py`; 751 rows for the 55,608 turns
of the bench ledger).

The writer keeps it, not triggers (a trigger makes SQLite journal every row written, as the
search index found): an item takes its session's sums out before it writes its rows and puts
them back after (`session_out`, `session_in`), and every delete of turns or sessions goes
through `before_delete`. A migration that changes turns or sessions after m025 must sum the
rollup again (`rebuild`); rows changed by hand in the file are not summed again. A row whose
turns all moved elsewhere stays at zero, and is not read.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from tracehouse.model.turn_time import MODEL, ROLLUP, ROLLUP_KEY, ROLLUP_SUMS, WHEN, quarter_hour

SINCE_SCHEMA = 25  # a ledger holds it from its 25th migration on (m025_usage_slots)

CREATE = (
    f"CREATE TABLE IF NOT EXISTS {ROLLUP} (slot TEXT NOT NULL, source_provider TEXT NOT NULL,"
    " model TEXT NOT NULL, is_subagent INTEGER NOT NULL, turns INTEGER NOT NULL,"
    + ", ".join(f"{c} INTEGER NOT NULL" for c in ROLLUP_SUMS)
    + f", PRIMARY KEY ({', '.join(ROLLUP_KEY)})) WITHOUT ROWID"
)


def _summed(sign: str, where: str) -> str:
    """The sums (`-`: taken out) of the turns `t` that `where` selects, a row per key. A turn
    without a time is in the slot '' and one without a model in the model ''."""
    sums = ", ".join(f"{sign}coalesce(sum(t.{c}), 0) AS {c}" for c in ROLLUP_SUMS)
    return (
        f"SELECT coalesce({quarter_hour(WHEN)}, '') AS slot, s.source_provider,"
        f" coalesce({MODEL}, '') AS model, coalesce(s.is_subagent, 0) AS is_subagent,"
        f" {sign}count(*) AS turns, {sums}"
        f" FROM turns t JOIN sessions s ON s.session_id = t.session_id WHERE {where}"
        " GROUP BY 1, 2, 3, 4"
    )


def _added(sign: str, where: str) -> str:
    """Add (`+`) or take out (`-`) the sums of the turns `t` that `where` selects."""
    updates = ", ".join(f"{c} = {c} + excluded.{c}" for c in ("turns", *ROLLUP_SUMS))
    return (
        f"INSERT INTO {ROLLUP} {_summed(sign, where)}"
        f" ON CONFLICT ({', '.join(ROLLUP_KEY)}) DO UPDATE SET {updates}"
    )


# Every turn summed afresh: what the rollup holds when it is true (`store verify`).
SUMMED = _summed("", "1 = 1")
SESSION_OUT = _added("-", "t.session_id = ?")
SESSION_IN = _added("+", "t.session_id = ?")


def session_out(conn: sqlite3.Connection, session_id: str) -> None:
    """Before a session's row or turns are written again: its sums as stored, taken out."""
    conn.execute(SESSION_OUT, (session_id,))


def session_in(conn: sqlite3.Connection, session_id: str) -> None:
    """After they are written: its sums as they now stand, put in."""
    conn.execute(SESSION_IN, (session_id,))


def before_delete(conn: sqlite3.Connection, table: str, where: str, params: Sequence[Any]) -> None:
    """Before `DELETE FROM table WHERE where`: the sums of the turns it removes (a session's
    are all of its turns that are left), taken out."""
    if table == "turns":
        conn.execute(_added("-", f"t.turn_id IN (SELECT turn_id FROM turns WHERE {where})"),
                     tuple(params))  # fmt: skip
    elif table == "sessions":
        selected = f"t.session_id IN (SELECT session_id FROM sessions WHERE {where})"
        conn.execute(_added("-", selected), tuple(params))


def rebuild(conn: sqlite3.Connection) -> int:
    """Sum the rollup anew from every turn; returns its rows."""
    conn.execute(CREATE)
    conn.execute(f"DELETE FROM {ROLLUP}")
    return conn.execute(f"INSERT INTO {ROLLUP} {SUMMED}").rowcount
