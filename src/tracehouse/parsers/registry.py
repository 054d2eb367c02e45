"""The parsers: provider name → the package that reads it, as `model/sources.py` lists them
(STYLE "Source interface"). A package declares its provider (`PROVIDER`) besides; the two must
agree, and an import that finds otherwise fails at once rather than filing rows under another
agent."""

from __future__ import annotations

import importlib
from collections.abc import Iterable

from tracehouse.model.sources import SOURCES
from tracehouse.parsers.base import SourceParser


def _parsers() -> dict[str, SourceParser]:
    found: dict[str, SourceParser] = {}
    for provider, (package, _label, _clock) in SOURCES.items():
        module = importlib.import_module(f"tracehouse.parsers.{package}")
        declared = module.PROVIDER
        if declared != provider:
            raise ImportError(f"parsers/{package} reads {declared!r}, listed as {provider!r}")
        found[provider] = module  # type: ignore[assignment]
    return found


PARSERS: dict[str, SourceParser] = _parsers()


def import_readers(providers: Iterable[str]) -> None:
    """Import these sources' reading side now (`reading_side`): a process about to fork its
    parsers, which then share it instead of each importing its own."""
    for provider in set(providers):
        _ = PARSERS[provider].parse
