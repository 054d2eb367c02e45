"""What a full run of `statusline` or `usage` settled from the settings, kept for the quick paths
that answer the next call having imported nothing heavier than `sqlite3` and `json`
(`statusline_answer.quick_answer`, `usage_quick.quick_report`).

A new Python process that loads the settings, the store and the price table spends most of its
time importing them. So a full run keeps in the state directory (`settled.json`) the ledger's
file and schema, whether limits are set and which memo of prices it priced with, under a key of
everything that settles them (the `TRACEHOUSE_*` and XDG environment, `HOME`, the flags, the
working directory where a path is relative) and the stamps (size and time) of the files read
for them: the config file, the user's price file, the price dataset. A later call with the same
key and stamps answers from the ledger itself, read-only; a difference, a price the memo does not
hold or a ledger whose schema moved, and the quick path answers None: the full path answers and
keeps the new state. A few keys are kept at once (the status line hook's and a person's `usage`
may name the ledger differently), the newest first.

Only where the state directory is XDG's (Linux, the BSDs): elsewhere platformdirs' rules are not
worth repeating, and the full path answers every call.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys

from tracehouse.reports.turn_rules import kept_rates, price_key

TYPE_CHECKING = False  # typing itself costs the quick paths more than their queries
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path
    from typing import Any

    from tracehouse.config import Settings
    from tracehouse.reports.statusline import Query
    from tracehouse.reports.turn_rules import Rates

KEPT = "settled.json"
KEYS = 8  # settled states kept, newest first
# Besides TRACEHOUSE_*, the environment where the settings' default files are found.
NAMING = ("HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME")
PRICES = "prices.json"  # price_memo.remembered_prices' file


class NotKept(Exception):
    """A price the memo does not hold: the full path looks it up."""


class Settled:
    """A kept state that still holds: the ledger it names and the prices the memo keeps."""

    __slots__ = ("_known", "_rates", "ledger", "limits", "schema", "source")

    def __init__(self, kept: dict[str, Any], prices: dict[str, Any]) -> None:
        self.ledger: str = kept["ledger"]
        self.schema = kept.get("schema")
        self.limits = kept.get("limits")
        self.source = str(prices.get("source") or "")  # where the prices come from
        self._known: dict[str, Any] = prices["known"]
        self._rates: dict[str, Rates | None] = {}  # those checked: a report asks again and again

    def rates(self, model: str | None, day: str) -> Rates | None:
        """A model's rates on a UTC day as the memo keeps them; NotKept where it keeps none."""
        name = price_key(model, day)
        if name in self._rates:
            return self._rates[name]
        if name not in self._known:
            raise NotKept(name)
        rates = None if self._known[name] is None else kept_rates(self._known[name])
        if rates is None and self._known[name] is not None:
            raise NotKept(name)  # damaged
        self._rates[name] = rates
        return rates

    def connect(self) -> sqlite3.Connection | None:
        """The ledger, read-only, if its schema is still the one kept."""
        try:
            conn = sqlite3.connect(_read_only(self.ledger), uri=True, timeout=2.0)
        except sqlite3.Error:
            return None
        try:
            if conn.execute("PRAGMA schema_version").fetchone()[0] == self.schema:
                return conn
        except sqlite3.Error:
            pass
        conn.close()
        return None


def recall(env: Mapping[str, str], store: str | None, config: str | None) -> Settled | None:
    """The state a full run kept for these flags in this environment, if nothing that settles
    it has changed since; else None."""
    state = state_dir(env)
    if state is None:
        return None
    entries = _read_json(os.path.join(state, KEPT)).get("entries")
    prices = _read_json(os.path.join(state, PRICES))
    wanted = key(env, store, config)
    kept = next((e for e in entries if isinstance(e, dict) and e.get("key") == wanted), None) \
        if isinstance(entries, list) else None  # fmt: skip
    if (
        kept is None
        or not isinstance(stamps := kept.get("stamps"), dict)
        or any(stamp(path) != value for path, value in stamps.items())
        or prices.get("binding") != kept.get("prices")
        or not isinstance(prices.get("known"), dict)
        or not isinstance(kept.get("ledger"), str)
    ):
        return None
    return Settled(kept, prices)


def remember(settings: Settings, query: Query, prices_binding: str, own_prices: Path,
             flags: tuple[str | None, str | None]) -> None:  # fmt: skip
    """Keep what a full run resolved for a SQLite ledger, where the quick paths look."""
    from tracehouse import config as settings_module
    from tracehouse.store.location import parse_store

    state = state_dir(os.environ)
    if state is None or os.path.abspath(state) != str(settings_module.state_dir()):
        return
    store, config = flags
    where = parse_store(settings.store)
    if where.backend != "sqlite":
        return
    config_file = (
        config or os.environ.get("TRACEHOUSE_CONFIG") or str(settings_module.default_config_path())
    )
    spec = _dataset_file()
    files = [os.path.abspath(config_file), str(own_prices), *([spec] if spec else [])]
    kept = {
        "key": key(os.environ, store, config),
        "stamps": {path: stamp(path) for path in files},
        "ledger": os.path.abspath(os.path.expanduser(where.target)),
        "schema": query("PRAGMA schema_version", [])[0]["schema_version"],
        "limits": bool(settings.limits),
        "prices": prices_binding,
    }
    entries = _read_json(os.path.join(state, KEPT)).get("entries")
    others = [e for e in entries if isinstance(e, dict) and e.get("key") != kept["key"]] \
        if isinstance(entries, list) else []  # fmt: skip
    try:
        os.makedirs(state, exist_ok=True)
        partial = os.path.join(state, f"{KEPT}.{os.getpid()}.partial")
        with open(partial, "w", encoding="utf-8") as out:
            json.dump({"entries": [kept, *others][:KEYS]}, out)
        os.replace(partial, os.path.join(state, KEPT))
    except OSError:
        pass  # a cache: the next call takes the full path again


def state_dir(env: Mapping[str, str]) -> str | None:
    """The state directory by XDG's rule, where it applies."""
    if not sys.platform.startswith(("linux", "freebsd", "openbsd", "netbsd")):
        return None
    base = env.get("XDG_STATE_HOME", "").strip() or os.path.join(env.get("HOME") or "~",
                                                                  ".local", "state")  # fmt: skip
    return os.path.join(os.path.expanduser(base), "tracehouse")


def key(env: Mapping[str, str], store: str | None, config: str | None) -> dict[str, Any]:
    """What settles the settings besides the files stamped: the environment that names them
    and the flags; the working directory where a path among them is relative."""
    named = {k: v for k, v in env.items() if k.startswith("TRACEHOUSE_") or k in NAMING}
    paths = [store, config, env.get("TRACEHOUSE_STORE"), env.get("TRACEHOUSE_CONFIG")]
    relative = any(p and "://" not in p and not os.path.isabs(os.path.expanduser(p))
                   for p in paths)  # fmt: skip
    return {"env": dict(sorted(named.items())), "store": store, "config": config,
            "cwd": os.getcwd() if relative else None}  # fmt: skip


def stamp(path: str) -> str:
    try:
        st = os.stat(path)
    except OSError:
        return "none"
    return f"{st.st_size}:{st.st_mtime_ns}"


def query_of(conn: sqlite3.Connection) -> Query:
    """`conn` as a store's `query`: rows as dicts of their column names."""

    def query(sql: str, params: Sequence[Any]) -> list[dict[str, Any]]:
        cursor = conn.execute(sql, tuple(params))
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor]

    return query


def _dataset_file() -> str | None:
    import importlib.util

    spec = importlib.util.find_spec("genai_prices")
    return spec.origin if spec is not None else None


def _read_json(path: str) -> dict[str, Any]:
    try:
        with open(path, "rb") as f:
            found = json.load(f)
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def _read_only(path: str) -> str:
    """A URI that opens `path` read-only (SQLite's URI escapes: %, ? and #)."""
    escaped = path.replace("%", "%25").replace("?", "%3f").replace("#", "%23")
    return f"file:{escaped}?mode=ro"
