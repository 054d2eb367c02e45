"""The `tracehouse` program's first step. Two commands are run often enough that loading typer
and the command line's modules (over 100 ms) would be most of their time, so given only the
options listed here they are answered without them:

- `tracehouse statusline`, which an agent's status line hook runs after every message: from
  the state the last full answer settled (`reports/statusline_answer.py`), else through the
  settings;
- `tracehouse usage` of a period and window the rollup answers (`reports/usage_quick.py`),
  when a full run settled the ledger and the prices before.

Every other command line, and these where their quick path cannot answer, goes to the typer
app (`cli/app.py`).
"""

from __future__ import annotations

import sys

STATUSLINE_OPTIONS = ("--agent", "--store", "--config")
USAGE_OPTIONS = ("--store", "--config", "--since", "--until")
USAGE_FLAGS = ("--utc", "--breakdown")


def main() -> None:
    args = sys.argv[1:]
    if args[:1] == ["statusline"]:
        options = _options(args[1:], STATUSLINE_OPTIONS)
        if options is not None and not options[0]:
            sys.exit(_statusline(**options[1]))
    if args[:1] == ["usage"]:
        options = _options(args[1:], USAGE_OPTIONS, USAGE_FLAGS)
        if options is not None and len(options[0]) <= 1 and _usage(*options):
            sys.exit(0)
    from tracehouse.cli.app import main as full

    full()


def _options(args: list[str], valued: tuple[str, ...], flags: tuple[str, ...] = ()
             ) -> tuple[list[str], dict[str, str]] | None:  # fmt: skip
    """The arguments and the options among `valued` (`--name value` or `--name=value`) and
    `flags`, each at most once, by name without its dashes (a flag's value is ''); None for
    anything else, which the typer command answers (`--help` too)."""
    found: dict[str, str] = {}
    arguments: list[str] = []
    rest = list(args)
    while rest:
        given = rest.pop(0)
        if not given.startswith("-"):
            arguments.append(given)
            continue
        name, equals, value = given.partition("=")
        if name in found or (name not in valued and (name not in flags or equals)):
            return None
        if name in valued and not equals:
            if not rest:
                return None
            value = rest.pop(0)
        found[name] = value
    return arguments, {name.removeprefix("--"): value for name, value in found.items()}


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


def _usage(period: list[str], options: dict[str, str]) -> bool:
    """Whether the quick path printed the report."""
    from tracehouse.reports.usage_quick import quick_report

    report = quick_report(period[0] if period else "daily", options.get("store"),
                          options.get("config"), utc="utc" in options,
                          breakdown="breakdown" in options, since=options.get("since"),
                          until=options.get("until"))  # fmt: skip
    if report is None:
        return False
    from tracehouse.cli.usage_text import write

    write(report)
    return True


def agent_document() -> str:
    """What the agent's hook passed on standard input (nothing at a terminal)."""
    return sys.stdin.read() if not sys.stdin.isatty() else ""
