"""Settings: defaults < config file < `TRACEHOUSE_*` environment < flags, validated once.

The config file is found through `--config`, then `TRACEHOUSE_CONFIG`, then `config.toml` in the
platform's config directory. Every setting is declared once below, with its type, default and the
line that documents it; `config/tracehouse.toml` is checked against these declarations by a test.
A bad value is one error naming the setting and where it came from.
"""

from __future__ import annotations

import os
import re
import socket
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import platformdirs

from tracehouse import validate
from tracehouse.errors import ConfigError
from tracehouse.model.tables import PROVIDERS

APP = "tracehouse"
# A machine's name at a gateway: part of the keys of its cursors (`host:path`).
MACHINE = re.compile(r"[A-Za-z0-9._-]{1,64}")


def default_store_path() -> Path:
    return Path(platformdirs.user_data_dir(APP)) / "ledger.db"


def default_config_path() -> Path:
    return Path(platformdirs.user_config_dir(APP)) / "config.toml"


def state_dir() -> Path:
    """What tracehouse keeps between runs that is neither the ledger nor settings: caches that
    save time (folder listings, prices), each safe to delete."""
    return Path(platformdirs.user_state_dir(APP))


@dataclass(frozen=True)
class Settings:
    store: str = field(default_factory=lambda: str(default_store_path()))
    home: str = field(default_factory=lambda: str(Path.home()))
    # provider → roots given explicitly; a provider listed with no roots uses its default roots.
    sources: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # Where per-project logs (Aider, Crush) are looked for: each root and two levels below it.
    project_roots: tuple[str, ...] = ("~",)
    batch_bytes: int = 8 * 1024 * 1024
    batch_sessions: int = 500
    workers: int = 0
    workers_min_bytes: int = 16 * 1024 * 1024
    index_builders_min_cores: int = 4
    quiet_seconds: float = 2.0
    max_field_bytes: int = 1024 * 1024
    max_line_bytes: int = 64 * 1024 * 1024
    progress: bool = True
    # Pushing to a gateway (`--store https://…`): the file holding the push token, and the name
    # the gateway keys this machine's cursors by.
    token_file: str = ""
    machine: str = field(default_factory=lambda: socket.gethostname() or "localhost")
    # Secrets found in what is read are replaced by markers before anything is stored.
    redact: bool = True
    redact_patterns: Mapping[str, str] = field(default_factory=dict)  # kind → regex
    redact_allow: tuple[str, ...] = ()  # values never redacted
    redact_key_file: str = ""  # "": redaction.key in the data directory
    # What the user allows their agents to spend (`reports/limits.py`): `usage limits` and the
    # syncs say when one is crossed.
    limits: tuple[Limit, ...] = ()
    # The model that makes the vectors of search by meaning (`search/embedders.py`).
    embeddings: str = "wordllama"

    def with_flags(self, **flags: Any) -> Settings:
        """Flags win over everything; a flag left at None changes nothing."""
        given = {k: v for k, v in flags.items() if v is not None}
        merged = _validate({**self.__dict__, **given}, "the command line")
        return replace(self, **merged)

    def worker_count(self) -> int:
        return self.workers or max(1, os.cpu_count() or 1)


DOCS: dict[str, str] = {
    "store": "Where the ledger lives: a SQLite file path, or a postgresql:// DSN.",
    "home": "The home directory whose agent logs are read (default: yours).",
    "sources": "Per source, the roots to read instead of the defaults under `home`.",
    "project_roots": (
        "Where per-project logs (Aider, Crush) are looked for: in each directory and two levels"
        " below it (`~` is `home`)."
    ),
    "batch_bytes": "Source bytes parsed into one import batch (one transaction).",
    "batch_sessions": "Sessions at most in one import batch.",
    "workers": (
        "Sync processes; 0 means one per CPU core. On SQLite one writes and up to 4 parse"
        " (more would only wait for the writer); on PostgreSQL each parses and writes."
    ),
    "workers_min_bytes": "Below this much to parse, no worker processes are started.",
    "index_builders_min_cores": (
        "On SQLite, a first load with workers builds its two large search indexes in processes"
        " beside the writer on a machine of at least this many cores (0: never)."
    ),
    "quiet_seconds": "A last line with no newline counts once the file has been quiet this long.",
    "max_field_bytes": "Longer text fields are cut to this size with a marker and the full hash.",
    "max_line_bytes": "A longer line, or a document read whole, is skipped and rejected unread.",
    "progress": "Show a progress bar on stderr when it is a terminal.",
    "token_file": "With a gateway as the store: the file holding the push token.",
    "machine": "With a gateway as the store: this machine's name there (default: hostname).",
    "redact": "Replace secrets (keys, tokens, passwords) with markers before storing anything.",
    "redact_patterns": "Your own secret shapes: kind = regular expression (its group, or all).",
    "redact_allow": "Values never redacted (a test key that looks real).",
    "redact_key_file": "The key of the markers' hashes (default: redaction.key, data directory).",
    "limits": (
        "Spending limits, [[limits]] tables: cost (dollars) or tokens, per day, week or month,"
        " on one provider, model or project or on everything (docs/usage.md)."
    ),
    "embeddings": (
        "The model of search by meaning: wordllama (offline, the default), model2vec:FOLDER or"
        " model2vec:OWNER/NAME, openai:MODEL@URL, or none (docs/search.md)."
    ),
}


def _int(minimum: int) -> Callable[[Any], int]:
    def convert(value: Any) -> int:
        if isinstance(value, str):
            value = int(value.strip())
        if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
            raise ValueError(f"expected a whole number ≥ {minimum}")
        return value

    return convert


def _float(value: Any) -> float:
    result = float(value)
    if result < 0:
        raise ValueError("expected a number ≥ 0")
    return result


def _bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ValueError("expected true or false")


def _str(value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError("expected a non-empty string")
    return value


def _sources(value: Any) -> dict[str, tuple[str, ...]]:
    if isinstance(value, str):  # environment: "claude-code=/a,codex"
        value = dict(_split_source(part) for part in value.split(",") if part.strip())
    if not isinstance(value, Mapping):
        raise ValueError("expected a table of source = [paths]")
    out: dict[str, tuple[str, ...]] = {}
    for name, roots in value.items():
        if name not in PROVIDERS:
            raise ValueError(f"unknown source {name!r} (known: {', '.join(PROVIDERS)})")
        if isinstance(roots, str):
            roots = [roots] if roots else []
        if not isinstance(roots, list | tuple) or not all(isinstance(r, str) for r in roots):
            raise ValueError(f"{name}: expected a list of paths")
        out[name] = tuple(roots)
    return out


def _split_source(text: str) -> tuple[str, tuple[str, ...]]:
    name, _, path = text.strip().partition("=")
    return name.strip(), (path.strip(),) if path.strip() else ()


def _machine(value: Any) -> str:
    text = _str(value)
    if not MACHINE.fullmatch(text):
        raise ValueError("expected 1–64 letters, digits, '.', '_' or '-'")
    return text


def _patterns(value: Any) -> dict[str, str]:
    if isinstance(value, str):  # environment: a TOML inline table
        try:
            value = tomllib.loads(f"patterns = {value}")["patterns"]
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f'expected an inline table {{ kind = "regex" }}: {exc}') from None
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise ValueError('expected a table of kind = "regular expression"')
    for kind, pattern in value.items():  # a bad expression is refused here, naming its kind
        try:
            re.compile(pattern.encode("utf-8"))
        except re.error as exc:
            raise ValueError(f"pattern {kind!r} is not a regular expression: {exc}") from None
    return dict(value)


def _strings(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):  # environment: comma-separated
        value = [part for part in value.split(",") if part]
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) and v for v in value):
        raise ValueError("expected a list of non-empty strings")
    return tuple(value)


# Spending limits (`[[limits]]`): what the user set; `reports/limits.py` says what was spent
# against each.
LIMIT_PERIODS = ("day", "week", "month")
LIMIT_KEYS = {"cost", "tokens", "per", "provider", "model", "project"}


@dataclass(frozen=True)
class Limit:
    per: str
    cost: float | None = None
    tokens: int | None = None
    provider: str | None = None
    model: str | None = None
    project: str | None = None

    @property
    def scope(self) -> str:
        parts = [p for p in (self.provider, self.model, self.project) if p]
        return " · ".join(parts) or "everything"


def parse_limits(value: Any) -> tuple[Limit, ...]:
    """The config's `limits`: a list of tables (a JSON list in the environment); limits read
    before (settings validated again with a command's flags) as they are."""
    if isinstance(value, tuple) and all(isinstance(v, Limit) for v in value):
        return value
    if isinstance(value, str):
        import json

        try:
            value = json.loads(value)
        except ValueError:
            raise ValueError("expected a JSON list of limits") from None
    if not isinstance(value, list):
        raise ValueError("expected a list of [[limits]] tables")
    return tuple(_limit(n, entry) for n, entry in enumerate(value, 1))


def _limit(n: int, entry: Any) -> Limit:
    where = f"limit {n}"
    if not isinstance(entry, dict):
        raise ValueError(f"{where}: expected a table")
    unknown = sorted(set(entry) - LIMIT_KEYS)
    if unknown:
        known = ", ".join(sorted(LIMIT_KEYS))
        raise ValueError(f"{where}: unknown key {unknown[0]!r} (known: {known})")
    per = entry.get("per", "day")
    if per not in LIMIT_PERIODS:
        raise ValueError(f"{where}: per {per!r}: one of {', '.join(LIMIT_PERIODS)}")
    cost, tokens = entry.get("cost"), entry.get("tokens")
    if (cost is None) == (tokens is None):
        raise ValueError(f"{where}: give cost (US dollars) or tokens, one of them")
    if cost is not None and not _positive(cost, float):
        raise ValueError(f"{where}: cost {cost!r}: a number of dollars above 0")
    if tokens is not None and not _positive(tokens, int):
        raise ValueError(f"{where}: tokens {tokens!r}: a whole number above 0")
    names = {k: entry.get(k) for k in ("provider", "model", "project")}
    for key, name in names.items():
        if name is not None and (not isinstance(name, str) or not name.strip()):
            raise ValueError(f"{where}: {key} {name!r}: a non-empty name")
    if names["provider"]:
        try:
            validate.provider(names["provider"])
        except ConfigError as exc:
            raise ValueError(f"{where}: {exc}") from None
    return Limit(per, None if cost is None else float(cost), tokens, **names)


def _positive(value: Any, kind: type) -> bool:
    allowed = (int, float) if kind is float else (int,)
    return isinstance(value, allowed) and not isinstance(value, bool) and value > 0


# The model of search by meaning (`search/embedders.py` loads it), as the setting names it.
_ENDPOINT = re.compile(r"openai:(?P<model>[^@\s]+)@(?P<url>https?://\S+)")
WORDLLAMA = "wordllama:l2_supercat_256"  # the packaged model and its dimensions


@dataclass(frozen=True)
class ModelSpec:
    kind: str  # wordllama, model2vec, openai, none
    target: str = ""  # the folder or hub id (model2vec), the model (openai)
    url: str = ""  # openai: the endpoint's base URL

    @property
    def name(self) -> str:
        """What a ledger records with the vectors this model made."""
        if self.kind == "wordllama":
            return WORDLLAMA
        if self.kind == "openai":
            return f"openai:{self.target}@{self.url}"
        return f"{self.kind}:{self.target}" if self.target else self.kind


def parse_model(text: str) -> ModelSpec:
    """A model setting as written (`wordllama`, `model2vec:…`, `openai:MODEL@URL`, `none`)."""
    text = text.strip()
    if text in ("wordllama", WORDLLAMA, "none"):
        return ModelSpec(text.split(":")[0])
    if text.startswith("model2vec:") and len(text) > len("model2vec:"):
        return ModelSpec("model2vec", text.removeprefix("model2vec:"))
    found = _ENDPOINT.fullmatch(text)
    if found:
        return ModelSpec("openai", found["model"], found["url"].rstrip("/"))
    raise ValueError(
        "expected wordllama, model2vec:FOLDER_OR_HUB_ID, openai:MODEL@http(s)://HOST/… or none"
    )


def _embeddings(value: Any) -> str:
    return parse_model(_str(value)).name


CONVERT: dict[str, Callable[[Any], Any]] = {
    "store": _str,
    "home": _str,
    "sources": _sources,
    "project_roots": _strings,
    "batch_bytes": _int(1),
    "batch_sessions": _int(1),
    "workers": _int(0),
    "workers_min_bytes": _int(0),
    "index_builders_min_cores": _int(0),
    "quiet_seconds": _float,
    "max_field_bytes": _int(1024),
    "max_line_bytes": _int(1024),
    "progress": _bool,
    "token_file": lambda value: "" if value == "" else _str(value),  # "": not set
    "machine": _machine,
    "redact": _bool,
    "redact_patterns": _patterns,
    "redact_allow": _strings,
    "redact_key_file": lambda value: "" if value == "" else _str(value),
    "limits": parse_limits,
    "embeddings": _embeddings,
}


def _validate(values: Mapping[str, Any], origin: str) -> dict[str, Any]:
    out = {}
    for name, value in values.items():
        convert = CONVERT.get(name)
        if convert is None:
            raise ConfigError(f"unknown setting `{name}` in {origin}")
        try:
            out[name] = convert(value)
        except (ValueError, TypeError) as exc:
            raise ConfigError(f"setting `{name}` in {origin}: {exc} (got {value!r})") from None
    return out


def parse_source_flags(flags: list[str] | None) -> dict[str, tuple[str, ...]] | None:
    """`--source claude-code=PATH` (repeatable) → {provider: roots}."""
    if not flags:
        return None
    merged: dict[str, list[str]] = {}
    for flag in flags:
        name, roots = _split_source(flag)
        merged.setdefault(name, []).extend(roots)
    return {name: tuple(roots) for name, roots in merged.items()}


def load_settings(config: Path | None = None, env: Mapping[str, str] | None = None) -> Settings:
    env = os.environ if env is None else env
    values: dict[str, Any] = {}
    path = config or (Path(env["TRACEHOUSE_CONFIG"]) if env.get("TRACEHOUSE_CONFIG") else None)
    if path is not None and not path.exists():
        raise ConfigError(f"config file {path} does not exist")
    if path is None and default_config_path().exists():
        path = default_config_path()
    if path is not None:
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(f"config file {path} cannot be read: {exc}") from None
        values.update(_validate(data, str(path)))
    for f in fields(Settings):
        name = f"TRACEHOUSE_{f.name.upper()}"
        if env.get(name):
            values.update(_validate({f.name: env[name]}, f"environment variable {name}"))
    # The store's kind, `~` in a path, and a bad value are settled by `store/location.py` when
    # the store is opened.
    return Settings(**values)
