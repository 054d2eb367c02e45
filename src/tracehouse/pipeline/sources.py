"""Which roots a sync scans, from the settings and the `--source` / `--home` flags."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import xxhash

from tracehouse.config import Settings, state_dir
from tracehouse.errors import ConfigError
from tracehouse.parsers.registry import PARSERS
from tracehouse.pipeline.options import SyncOptions
from tracehouse.redaction import redactor_for
from tracehouse.store.location import GATEWAY_SCHEMES

if TYPE_CHECKING:
    from tracehouse.search.embedders import Lazy


def resolve_sources(
    settings: Settings,
    selected: Mapping[str, tuple[str, ...]] | None = None,
    *,
    home_given: bool = False,
) -> dict[str, list[Path]]:
    """provider → roots. `--source` wins over the config's `sources`; a source named without a
    path uses its default roots under `home`. With an explicit `--home`, the environment's own
    overrides (CLAUDE_CONFIG_DIR, XDG_CONFIG_HOME, …) describe another home and are ignored."""
    chosen = dict(selected or settings.sources or dict.fromkeys(PARSERS, ()))
    home = Path(settings.home).expanduser()
    if home_given and not home.is_dir():
        raise ConfigError(f"--home {settings.home}: no such directory")
    env: Mapping[str, str] = {} if home_given else os.environ
    out: dict[str, list[Path]] = {}
    for provider, roots in chosen.items():
        parser = PARSERS.get(provider)
        if parser is None:
            known = ", ".join(PARSERS)
            raise ConfigError(f"unknown source {provider!r}: this version reads {known}")
        named = [Path(r).expanduser() for r in roots]
        for path in named:
            if not path.is_dir():  # a root the user named is a typo if it is not there
                raise ConfigError(f"source {provider}={path}: no such directory")
        if not named and getattr(parser, "PER_PROJECT", False):
            named = [_under(home, r) for r in settings.project_roots]
        out[provider] = named or parser.default_roots(home, env)
    return out


def _under(home: Path, root: str) -> Path:
    """A project root: `~` and relative paths are under `home` (another home's, with --home)."""
    if root == "~" or root.startswith("~/"):
        return home / root[2:]
    return home / root


def sync_options(
    settings: Settings,
    selected: Mapping[str, tuple[str, ...]] | None = None,
    *,
    home_given: bool = False,
    **overrides: Any,
) -> SyncOptions:
    """The sync a command runs, from the settings and its flags."""
    sources = resolve_sources(settings, selected, home_given=home_given)
    return SyncOptions(
        sources=sources,
        workers=settings.worker_count(),
        batch_bytes=settings.batch_bytes,
        batch_sessions=settings.batch_sessions,
        chunk_bytes=settings.batch_bytes,
        max_field=settings.max_field_bytes,
        max_line=settings.max_line_bytes,
        quiet_seconds=settings.quiet_seconds,
        pool_min_bytes=settings.workers_min_bytes,
        builders_min_cores=settings.index_builders_min_cores,
        redactor=redactor_for(settings),
        folders_file=folders_file(sources),
        embeddings=embeddings_for(settings),
        **overrides,
    )


def embeddings_for(settings: Settings) -> Lazy | None:
    """The model a sync embeds its new rows with; None where search by meaning is off, or
    where the sync pushes to a gateway (which embeds what it is sent)."""
    from tracehouse.search.embedders import Lazy

    if settings.store.startswith(GATEWAY_SCHEMES):
        return None
    found = Lazy(settings.embeddings)
    return found if found.enabled else None


def folders_file(sources: Mapping[str, list[Path]]) -> Path | None:
    """Where the listings of the folders under these project roots are kept between runs, in
    the user's state directory: one file per set of roots (`--home` another home: another)."""
    per_project = [p for p in sources if getattr(PARSERS[p], "PER_PROJECT", False)]
    roots = sorted({os.path.abspath(root) for p in per_project for root in sources[p]})
    if not roots:
        return None
    key = xxhash.xxh3_64_hexdigest("\0".join(roots).encode())
    return state_dir() / "folders" / f"{key}.json"
