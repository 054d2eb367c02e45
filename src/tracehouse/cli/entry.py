"""The `tracehouse` program's first step. An agent's status line hook runs `tracehouse
statusline` after every message, so that command, given only the options it takes, is answered
here without loading typer and the command line's modules (100 ms of a 50 ms budget): from the
state the last full answer kept (`reports/statusline_answer.py`), else through the settings;
every other command line goes to the typer app (`cli/app.py`)."""

from __future__ import annotations

import sys

STATUSLINE_OPTIONS = ("--agent", "--store", "--config")


def main() -> None:
    args = sys.argv[1:]
    if args[:1] == ["statusline"]:
        options = _statusline_options(args[1:])
        if options is not None:
            sys.exit(_statusline(**options))
    from tracehouse.cli.app import main as full

    full()


def _statusline_options(args: list[str]) -> dict[str, str] | None:
    """`--agent A --store S --config C` (each as `--name value` or `--name=value`, each at
    most once); None for anything else, which the typer command answers (`--help` too)."""
    found: dict[str, str] = {}
    rest = list(args)
    while rest:
        name, equals, value = rest.pop(0).partition("=")
        if name not in STATUSLINE_OPTIONS or name in found:
            return None
        if not equals:
            if not rest:
                return None
            value = rest.pop(0)
        found[name] = value
    return {name.removeprefix("--"): value for name, value in found.items()}


def _statusline(agent: str = "claude-code", store: str | None = None,
                config: str | None = None) -> int:  # fmt: skip
    from tracehouse.reports.statusline_answer import quick_answer

    document = agent_document()
    line = quick_answer(agent, store, config, document)
    if line is not None:
        print(line)
        return 0
    from pathlib import Path

    from tracehouse.config import load_settings
    from tracehouse.errors import TracehouseError
    from tracehouse.reports.statusline_answer import answer

    try:
        settings = load_settings(Path(config) if config is not None else None)
        line = answer(settings.with_flags(store=store), agent, document, (store, config))
    except TracehouseError as exc:  # a bad option or config: said as any command says it
        from tracehouse.shown import escaped

        print(f"tracehouse: {escaped(str(exc))}", file=sys.stderr)
        return exc.exit_code
    print(line)
    return 0


def agent_document() -> str:
    """What the agent's hook passed on standard input (nothing at a terminal)."""
    return sys.stdin.read() if not sys.stdin.isatty() else ""
