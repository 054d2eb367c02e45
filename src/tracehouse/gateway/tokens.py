"""The gateway's bearer tokens: made once, shown once, kept only as a hash, in the ledger itself.

A token is 256 random bits, so a plain SHA-256 is enough to keep it (a slow password hash
protects guessable secrets, and these are not guessable); it is looked up by that hash through a
unique index and compared in constant time. Keeping tokens in the ledger lets any number of
gateways in front of one store accept the same tokens and hold no state of their own.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tracehouse.config import MACHINE
from tracehouse.errors import ConfigError
from tracehouse.model.contract import now_iso
from tracehouse.store.protocol import SessionStore, Tx

SCOPES = ("push", "read", "admin")  # admin: move sessions between machines
PREFIX = "thk_"  # recognisable in a leaked config or a secret scanner's rules
NAME = re.compile(r"[A-Za-z0-9._@-]{1,64}")


@dataclass(frozen=True)
class Grant:
    """Who a request's token was made for, and what it may do: a push token writes as its
    `machine` only (None for a read token)."""

    name: str
    scope: str
    machine: str | None = None


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def add_token(store: SessionStore, name: str, scope: str, machine: str | None = None) -> str:
    """A new token for `name` with `scope`; the only time the token itself exists in clear. A
    push token is bound to `machine` (by default its name): it writes as that machine only."""
    if not NAME.fullmatch(name):
        raise ConfigError(f"token name {name!r}: 1–64 letters, digits, '.', '_', '@' or '-'")
    if scope not in SCOPES:
        raise ConfigError(f"--scope {scope!r}: one of {', '.join(SCOPES)}")
    if scope == "push":
        machine = machine or name
        if not MACHINE.fullmatch(machine):
            raise ConfigError(
                f"--machine {machine!r}: a push token is bound to a machine name of 1–64"
                " letters, digits, '.', '_' or '-' (give --machine)"
            )
    elif machine is not None:
        raise ConfigError("--machine: only a push token is bound to a machine")
    token = PREFIX + secrets.token_urlsafe(32)

    def add(tx: Tx) -> None:
        if tx.query("SELECT 1 FROM api_tokens WHERE name = ?", [name]):
            raise ConfigError(f"a token named {name!r} exists; revoke it first or pick a name")
        tx.execute(
            "INSERT INTO api_tokens (name, scope, token_hash, created_at, machine)"
            " VALUES (?, ?, ?, ?, ?)",
            [name, scope, hash_token(token), now_iso(), machine],
        )

    store.write(add)
    return token


def write_token_file(path: Path, token: str) -> None:
    """A new file only its owner can read, holding the token: never a file that exists."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as exc:
        raise ConfigError(f"--output {path}: cannot create it ({exc.strerror})") from None
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(token + "\n")


def list_tokens(store: SessionStore) -> list[dict[str, Any]]:
    return store.query(
        "SELECT name, scope, machine, created_at, last_used_at FROM api_tokens ORDER BY name"
    )


def revoke_token(store: SessionStore, name: str) -> bool:
    """Remove the token named `name`; False when there is none."""
    removed = store.write(lambda tx: tx.execute("DELETE FROM api_tokens WHERE name = ?", [name]))
    return removed > 0


def grant_for(store: SessionStore, token: str) -> Grant | None:
    """The grant of a presented token, or None for an unknown one."""
    if not token.startswith(PREFIX) or len(token) > 200:
        return None
    digest = hash_token(token)
    rows = store.query(
        "SELECT name, scope, token_hash, last_used_at, machine FROM api_tokens"
        " WHERE token_hash = ?",
        [digest],
    )
    if not rows or not hmac.compare_digest(rows[0]["token_hash"], digest):
        return None
    row = rows[0]
    now = now_iso()
    if (row["last_used_at"] or "")[:16] != now[:16]:  # at most one write a minute per token
        store.write(
            lambda tx: tx.execute(
                "UPDATE api_tokens SET last_used_at = ? WHERE name = ?", [now, row["name"]]
            )
        )
    return Grant(row["name"], row["scope"], row["machine"])
