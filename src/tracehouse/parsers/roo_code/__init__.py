"""Roo Code's tasks (VS Code's global storage for `RooVeterinaryInc.roo-cline`): see README.md.
A fork of Cline that keeps Cline's task layout, read by Cline's task reader under its own
name."""

from collections.abc import Mapping
from pathlib import Path

from tracehouse.parsers.cline.task import extension_storage, parse
from tracehouse.parsers.kit.layout import Layout

PROVIDER = "roo-code"
EXTENSION = "rooveterinaryinc.roo-cline"
LAYOUT = Layout(PROVIDER, ("tasks/*/ui_messages.json",))
discover, unit_for, watch_roots = LAYOUT.discover, LAYOUT.unit_for, LAYOUT.watch_roots


def default_roots(home: Path, env: Mapping[str, str]) -> list[Path]:
    return extension_storage(home, env, EXTENSION)


__all__ = ["PROVIDER", "default_roots", "discover", "parse", "unit_for", "watch_roots"]
