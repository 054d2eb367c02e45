"""What a `--store` value names, decided once where it enters (DESIGN §4's two backends).

* a path, or `sqlite:///relative.db` / `sqlite:////absolute.db` (SQLAlchemy's spelling): SQLite;
* `postgresql://…` / `postgres://…`, or a libpq `key=value` string (`host=db dbname=ledger`):
  PostgreSQL, checked by libpq's own parser (psycopg's `conninfo_to_dict`) so a malformed DSN is
  one clear line, not a traceback deep in a connect;
* `https://host:port` / `http://…`: a gateway (`tracehouse serve`) that sync pushes to, with
  the token from `token_file` (or, inside tracehouse's own worker processes, in the URL);
* any other `scheme://`: refused. It used to become a SQLite file or directory of that name.

A password never leaves here in clear: `masked` hides it wherever libpq accepts one (the URL's
user info, a `?password=` query parameter, a `password=` pair).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from tracehouse.errors import ConfigError

DSN_SCHEMES = ("postgresql://", "postgres://")
GATEWAY_SCHEMES = ("https://", "http://")
SQLITE_SCHEME = "sqlite://"
_KEY_VALUE = re.compile(r"^\s*[a-z_]+\s*=")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


@dataclass(frozen=True)
class StoreLocation:
    backend: Literal["sqlite", "postgresql", "gateway"]
    target: str  # the path, or the DSN exactly as given (it may hold a password)

    @property
    def shown(self) -> str:
        if self.backend == "gateway":
            return without_token(self.target)
        return masked(self.target) if self.backend == "postgresql" else self.target


def parse_store(text: str) -> StoreLocation:
    value = text.strip()
    if not value:
        raise ConfigError("--store: empty; give a SQLite path or a PostgreSQL DSN")
    if value.startswith(DSN_SCHEMES) or _KEY_VALUE.match(value):
        _check_dsn(value)
        return StoreLocation("postgresql", value)
    if value.startswith(GATEWAY_SCHEMES):
        parts = urlsplit(value)
        if not parts.hostname:
            raise ConfigError(f"--store {without_token(value)!r}: a gateway URL needs a host")
        return StoreLocation("gateway", value)
    if value.startswith(SQLITE_SCHEME):
        path = value[len(SQLITE_SCHEME) :]
        if not path.startswith("/") or path == "/":
            raise ConfigError(
                f"--store {value!r}: write sqlite:///relative.db or sqlite:////abs.db"
            )
        return StoreLocation("sqlite", str(Path(path[1:]).expanduser()))
    if _SCHEME.match(value):
        scheme = value.split("://", 1)[0]
        raise ConfigError(
            f"--store: unknown kind of store {scheme + '://'!r}; give a SQLite path,"
            " sqlite:///path, postgresql://…, a libpq key=value string or a gateway's https://"
        )
    return StoreLocation("sqlite", str(Path(value).expanduser()))


def without_token(url: str) -> str:
    """A gateway URL as people see it: no user info (where tracehouse's workers carry the
    token), no query."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url.split("://", 1)[0] + "://…"
    netloc = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=netloc, query="", fragment=""))


def _check_dsn(dsn: str) -> None:
    from psycopg import ProgrammingError
    from psycopg.conninfo import conninfo_to_dict

    try:
        conninfo_to_dict(dsn)
    except ProgrammingError as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else "malformed"
        reason = reason.replace(dsn, masked(dsn))  # libpq quotes the string back, password too
        for secret in passwords(dsn):
            reason = reason.replace(secret, "***")
        raise ConfigError(f"--store {masked(dsn)}: not a valid PostgreSQL DSN ({reason})") from None


def masked(dsn: str) -> str:
    """The DSN with every password replaced by `***`: safe for logs, errors and `store info`."""
    if not dsn.startswith(DSN_SCHEMES):
        return re.sub(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", r"\1***", dsn)
    try:
        parts = urlsplit(dsn)
    except ValueError:  # not even a URL: show nothing of it that could be a secret
        return dsn.split("://", 1)[0] + "://…"
    userinfo, at, hostport = parts.netloc.rpartition("@")
    netloc = parts.netloc
    if at and ":" in userinfo:
        netloc = f"{userinfo.partition(':')[0]}:***@{hostport}"
    query = parts.query
    pairs = parse_qsl(query, keep_blank_values=True)
    if any(k == "password" for k, _ in pairs):
        query = urlencode([(k, "***" if k == "password" else v) for k, v in pairs], safe="*")
    return urlunsplit(parts._replace(netloc=netloc, query=query))


def passwords(dsn: str) -> list[str]:
    """Every password a DSN carries, as written and as libpq reads it (for scrubbing)."""
    found = []
    if dsn.startswith(DSN_SCHEMES):
        try:
            parts = urlsplit(dsn)
            if parts.password:
                found.append(parts.password)
            found += [v for k, v in parse_qsl(parts.query) if k == "password" and v]
        except ValueError:
            pass
    try:
        from psycopg.conninfo import conninfo_to_dict

        value = conninfo_to_dict(dsn).get("password")
    except Exception:
        value = None
    if value:
        found.append(str(value))
    return found
