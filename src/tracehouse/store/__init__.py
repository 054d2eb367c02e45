"""Session stores behind one protocol (DESIGN §4): SQLite by default, PostgreSQL for a team."""

from __future__ import annotations

from pathlib import Path

from tracehouse.store.location import parse_store
from tracehouse.store.protocol import RunTotals, SessionStore, StoreInfo

__all__ = ["RunTotals", "SessionStore", "StoreInfo", "open_store"]


def open_store(location: str | Path, *, create: bool = True, migrate: bool = True) -> SessionStore:
    """Open the store a `--store` value names: a file path, a `postgresql://` DSN, or a
    gateway's URL carrying its token (`remote.store.address_with`). Its schema is brought up to
    date unless `migrate` is False (`store migrate`)."""
    where = parse_store(str(location))
    if where.backend == "gateway":
        from tracehouse.store.remote.store import GatewayStore  # httpx only when pushing

        return GatewayStore(where.target)
    if where.backend == "postgresql":
        # psycopg is loaded only for a PostgreSQL ledger: the default SQLite path never pays it.
        from tracehouse.store.postgres.store import PostgresStore

        return PostgresStore(where.target, migrate=migrate)
    from tracehouse.store.sqlite.store import SqliteStore

    return SqliteStore(Path(where.target), create=create, migrate=migrate)
