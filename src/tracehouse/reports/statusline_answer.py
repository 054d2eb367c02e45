"""How the status line is answered: through the settings, the store and the price memo
(`answer`), or from a process that imports nothing heavier than `sqlite3` and `json`
(`quick_answer`).

Claude Code runs `tracehouse statusline` after every message; a new Python process that loads
the settings, the store and the price table spends most of its time importing them. So the
full path (`statusline.answer`, as `cli/entry.py` runs it) keeps in the state directory
(`statusline.json`) what it resolved that the next call needs: the ledger's file and schema,
whether limits are set, and which memo of prices it priced with, under a key of everything that
settles them (the `TRACEHOUSE_*` and XDG environment, `HOME`, the flags, the working directory
where a path is relative) and the stamps (size and time) of the files read for them: the config
file, the user's price file, the price dataset. A later call with the same key and stamps
answers from the ledger itself, read-only, with the same SQL (`statusline.status_line`); a
difference, a price not kept, limits to check, a ledger that is not a SQLite file or whose
schema moved, and it answers None: the full path answers and keeps the new state.

Only where the state directory is XDG's (Linux, the BSDs): elsewhere platformdirs' rules are not
worth repeating, and the full path answers every call.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys

from tracehouse.reports.statusline import AGENTS, payload_of, status_line
from tracehouse.reports.turn_rules import kept_rates, price_key

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path
    from typing import Any

    from tracehouse.config import Settings
    from tracehouse.reports.statusline import Query, Rates

KEPT = "statusline.json"
# Besides TRACEHOUSE_*, the environment where the settings' default files are found.
NAMING = ("HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME")
PRICES = "prices.json"  # price_memo.remembered_prices' file


class _NotKept(Exception):
    """A price the memo does not hold: the full path looks it up."""


def answer(settings: Settings, agent: str, document: str,
           flags: tuple[str | None, str | None] | None = None) -> str:  # fmt: skip
    """The line for `agent`'s status line hook, given the JSON document it passed: from the
    ledger the settings name, priced through the memo of prices. A ledger that cannot be read
    is said in the line, since an agent shows nothing of a command that fails. Given the
    `--store` and `--config` flags the settings were read with, what the quick path needs to
    answer the next call alone is kept (`remember`)."""
    from datetime import UTC, datetime

    from tracehouse.errors import TracehouseError
    from tracehouse.reports.limits import standings
    from tracehouse.reports.price_memo import remembered_prices
    from tracehouse.reports.pricing import own_prices_file
    from tracehouse.shown import escaped_line
    from tracehouse.store import open_configured_store

    if agent not in AGENTS:
        raise TracehouseError(f"--agent {agent!r}: one of {', '.join(AGENTS)}")
    own = own_prices_file()
    prices = remembered_prices(own)

    def rates_of(model: str | None, day: str) -> Rates | None:
        p = prices.price(model, day)
        return None if p is None else (p.input, p.output, p.cache_read, p.cache_write)

    try:
        ledger = open_configured_store(settings, create=False)
        try:
            now = datetime.now(UTC)
            crossed = [s.line() for s in standings(ledger, settings.limits, prices,
                                                   now.astimezone()) if s.crossed]  # fmt: skip
            line = status_line(ledger.query, payload_of(document), rates_of,
                               provider=AGENTS[agent], crossed=crossed, now=now)  # fmt: skip
            if flags is not None and ledger.backend == "sqlite":
                remember(settings, ledger.query, prices.binding, own, flags)
        finally:
            ledger.close()
    except TracehouseError as exc:
        line = f"tracehouse: {exc}"
    prices.save()
    return escaped_line(line)


def quick_answer(agent: str, store: str | None, config: str | None, document: str,
                 env: Mapping[str, str] = os.environ) -> str | None:  # fmt: skip
    """The line, or None where only the full path can answer it."""
    state = state_dir(env)
    if agent not in AGENTS or state is None:
        return None
    kept, prices = _read_json(os.path.join(state, KEPT)), _read_json(os.path.join(state, PRICES))
    if (
        kept.get("key") != key(env, store, config)
        or kept.get("limits") is not False
        or not isinstance(stamps := kept.get("stamps"), dict)
        or any(stamp(path) != value for path, value in stamps.items())
        or prices.get("binding") != kept.get("prices")
        or not isinstance(known := prices.get("known"), dict)
        or not isinstance(ledger := kept.get("ledger"), str)
    ):
        return None

    def rates_of(model: str | None, day: str) -> Rates | None:
        name = price_key(model, day)
        if name not in known:
            raise _NotKept(name)
        rates = None if known[name] is None else kept_rates(known[name])
        if known[name] is not None and rates is None:
            raise _NotKept(name)  # damaged
        return rates

    try:
        conn = sqlite3.connect(_read_only(ledger), uri=True, timeout=2.0)
    except sqlite3.Error:
        return None
    try:
        if conn.execute("PRAGMA schema_version").fetchone()[0] != kept.get("schema"):
            return None
        line = status_line(_query(conn), payload_of(document), rates_of, provider=AGENTS[agent])
    except (sqlite3.Error, _NotKept):
        return None
    finally:
        conn.close()
    from tracehouse.shown import escaped_line

    return escaped_line(line)


def remember(settings: Settings, query: Query, prices_binding: str, own_prices: Path,
             flags: tuple[str | None, str | None]) -> None:  # fmt: skip
    """Keep what the full path resolved for a SQLite ledger, where the quick path looks."""
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
    try:
        os.makedirs(state, exist_ok=True)
        partial = os.path.join(state, f"{KEPT}.{os.getpid()}.partial")
        with open(partial, "w", encoding="utf-8") as out:
            json.dump(kept, out)
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


def _query(conn: sqlite3.Connection) -> Query:
    def query(sql: str, params: Sequence[Any]) -> list[dict[str, Any]]:
        cursor = conn.execute(sql, tuple(params))
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor]

    return query
