"""Session stores behind one protocol (DESIGN §4): SQLite by default, PostgreSQL for a team."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tracehouse.store.location import GATEWAY_SCHEMES, parse_store
from tracehouse.store.protocol import RunTotals, SessionStore, StoreInfo

if TYPE_CHECKING:
    from tracehouse.config import Settings

__all__ = ["RunTotals", "SessionStore", "StoreInfo", "open_configured_store", "open_store"]


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


def open_configured_store(
    settings: Settings, *, create: bool = True, migrate: bool = True
) -> SessionStore:
    """The store the settings name; a gateway's with the push token of `token_file`, saying
    so when this machine's history is not redacted."""
    location = settings.store
    if location.startswith(GATEWAY_SCHEMES):
        from tracehouse.store.remote.store import gateway_address, unredacted

        location = gateway_address(location, settings.token_file, settings.machine)
        if not settings.redact:
            location = unredacted(location)
    return open_store(location, create=create, migrate=migrate)
