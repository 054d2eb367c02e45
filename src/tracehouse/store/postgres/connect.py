"""Connecting to a PostgreSQL ledger: one clear line for every way it can fail, no password shown.

A DSN names the ledger everywhere (`--store`, `TRACEHOUSE_STORE`, config, worker processes), so
it travels as written; what is printed is `masked(dsn)`, and any error text the server or libpq
returns has the password scrubbed before it reaches the user.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from tracehouse import retrying
from tracehouse.errors import StoreError, StoreUnavailableError
from tracehouse.retrying import RetryLog
from tracehouse.store.location import masked, passwords

if TYPE_CHECKING:
    import psycopg

CONNECT_TIMEOUT_S = 5
MIN_MASKED = 4
# An unreachable server is retried with backoff (a restart, a network blip); a wrong password
# or a missing database is not, since waiting cannot fix it.
CONNECT_BACKOFF = retrying.Backoff(attempts=4, first=0.25, most=2.0)
_USER_ERRORS = (
    "password authentication failed",
    "no password supplied",
    "does not exist",
    "invalid integer value",
    "invalid connection option",
    "invalid value",
    "invalid sslmode",
    "permission denied",
    "pg_hba.conf",
)


# libpq's framing around the server's reason: the DSN shown beside it already says where.
_FRAMING = re.compile(
    r'^(connection failed: )?(connection to server at "[^"]*"(, port \d+)? failed: )?'
)


def scrub(message: str, dsn: str) -> str:
    """An error's first line, without libpq's framing or the password (libpq may echo the
    connection string back)."""
    text = message.strip().splitlines()[0] if message.strip() else "unknown error"
    text = _FRAMING.sub("", text).removeprefix("FATAL:").strip()
    for secret in {v for p in passwords(dsn) for v in (p, unquote(p))}:
        text = text.replace(f":{secret}@", ":***@")
        # A bare occurrence too, unless the password is so short that masking it would mangle
        # ordinary words of the message.
        if len(secret) >= MIN_MASKED:
            text = text.replace(secret, "***")
    return text


def connect(dsn: str, log: RetryLog | None = None) -> psycopg.Connection[tuple[Any, ...]]:
    """A connection in autocommit (transactions are explicit), with JSON kept as text."""
    import psycopg

    where = masked(dsn)

    def unreachable(exc: BaseException) -> str | None:
        if isinstance(exc, psycopg.OperationalError) and not _user_error(exc):
            return "server unreachable: " + retrying.short(scrub(str(exc), dsn), 60)
        return None

    try:
        conn = retrying.call(
            lambda: psycopg.connect(
                dsn,
                autocommit=True,
                connect_timeout=CONNECT_TIMEOUT_S,
                application_name="tracehouse",
            ),
            reason=unreachable,
            backoff=CONNECT_BACKOFF,
            log=log,
        )
    except psycopg.ProgrammingError as exc:  # the DSN itself cannot be read
        reason = scrub(str(exc), dsn)
        raise StoreError(f"{where}: not a valid PostgreSQL DSN ({reason})") from None
    except psycopg.OperationalError as exc:
        reason = scrub(str(exc), dsn)
        if _user_error(exc):
            raise StoreError(f"{where}: cannot use this PostgreSQL ledger: {reason}") from None
        raise StoreUnavailableError(
            f"{where}: the PostgreSQL server did not answer"
            f" ({CONNECT_BACKOFF.attempts} tries): {reason}"
        ) from None
    _keep_json_as_text(conn)
    return conn


def _user_error(exc: BaseException) -> bool:
    return any(marker in str(exc) for marker in _USER_ERRORS)


def _keep_json_as_text(conn: psycopg.Connection[tuple[Any, ...]]) -> None:
    """JSON columns read back as the text that was stored, as they do from SQLite."""
    from psycopg.types.string import TextLoader

    for name in ("json", "jsonb"):
        conn.adapters.register_loader(name, TextLoader)
