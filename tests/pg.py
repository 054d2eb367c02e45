"""The PostgreSQL server under test: found once, one throwaway schema per store.

Tests use `TRACEHOUSE_PG_DSN` (default: the local server). With no server they skip and say
why, unless `TRACEHOUSE_REQUIRE_PG=1` (CI), where a missing server is a failure.
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

import pytest

DEFAULT_DSN = "postgresql://postgres@127.0.0.1:5432/test"
# Read when the tests start, before each test's isolated environment drops TRACEHOUSE_*.
PG_DSN = os.environ.get("TRACEHOUSE_PG_DSN") or DEFAULT_DSN
REQUIRE_PG = os.environ.get("TRACEHOUSE_REQUIRE_PG") == "1"
KEPT_ENV = (
    "TRACEHOUSE_CORPUS",
    "TRACEHOUSE_PG_DSN",
    "TRACEHOUSE_REQUIRE_PG",
    "TRACEHOUSE_REQUIRE_NPM",
)


def with_schema(dsn: str, schema: str) -> str:
    """The DSN with `search_path` set to one schema (libpq's `options`), so a store opened on
    it, in this process or a worker, keeps every table there."""
    parts = urlsplit(dsn)
    option = "options=" + quote(f"-csearch_path={schema}")
    query = f"{parts.query}&{option}" if parts.query else option
    return urlunsplit(parts._replace(query=query))


@dataclass(frozen=True)
class PgServer:
    dsn: str

    @classmethod
    def find(cls) -> PgServer:
        import psycopg

        try:
            psycopg.connect(PG_DSN, connect_timeout=3).close()
        except psycopg.Error as exc:
            reason = f"no PostgreSQL server answers at TRACEHOUSE_PG_DSN={PG_DSN}: {exc}"
            if REQUIRE_PG:
                pytest.fail(f"{reason} (TRACEHOUSE_REQUIRE_PG=1)")
            pytest.skip(reason)
        return cls(PG_DSN)

    def _run(self, sql: str) -> None:
        import psycopg

        with psycopg.connect(self.dsn, autocommit=True) as conn:
            conn.execute(sql)

    def create_schema(self) -> str:
        schema = f"th_test_{secrets.token_hex(6)}"
        self._run(f"CREATE SCHEMA {schema}")
        return schema

    def drop_schema(self, schema: str) -> None:
        self._run(f"DROP SCHEMA IF EXISTS {schema} CASCADE")

    def dsn_for(self, schema: str) -> str:
        return with_schema(self.dsn, schema)


class PasswordRefusingServer:
    """Speaks just enough of the PostgreSQL wire protocol to ask for a password and refuse it,
    as a server with password authentication does: the local test server trusts everyone, so
    this is how the wrong-password path is exercised for real through libpq."""

    def __init__(self) -> None:
        import socket
        import threading

        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def dsn(self, password: str) -> str:
        return (
            f"postgresql://bob:{password}@127.0.0.1:{self.port}/team"
            "?sslmode=disable&gssencmode=disable"
        )

    def _serve(self) -> None:
        import struct

        while True:
            try:
                client, _ = self.sock.accept()
            except OSError:
                return
            with client:
                try:
                    self._refuse(client, struct)
                except OSError:
                    continue

    @staticmethod
    def _refuse(client: Any, struct: Any) -> None:
        length = struct.unpack("!I", client.recv(4))[0]
        client.recv(length - 4)  # the startup packet: user, database
        client.sendall(b"R" + struct.pack("!II", 8, 3))  # AuthenticationCleartextPassword
        client.recv(1)
        length = struct.unpack("!I", client.recv(4))[0]
        client.recv(length - 4)  # the password
        fields = b'SFATAL\0VFATAL\0C28P01\0Mpassword authentication failed for user "bob"\0\0'
        client.sendall(b"E" + struct.pack("!I", len(fields) + 4) + fields)

    def close(self) -> None:
        self.sock.close()
