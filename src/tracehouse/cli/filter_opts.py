"""The session filter options every reading command takes, the same names and help everywhere."""

from __future__ import annotations

from typing import Annotated

import typer

from tracehouse.cli.common import PROVIDER_NAMES
from tracehouse.reports.filters import SessionFilters, build_session_filters
from tracehouse.store.protocol import SessionStore

ProvidersOpt = Annotated[
    list[str] | None,
    typer.Option("--provider", help=f"{PROVIDER_NAMES} (repeatable).", show_default=False),
]  # fmt: skip
ProjectOpt = Annotated[
    str | None,
    typer.Option("--project", help="Workspace path or project name (a prefix).",
                 show_default=False),
]  # fmt: skip
ModelOpt = Annotated[
    list[str] | None,
    typer.Option("--model", help="A model or its beginning, e.g. claude-opus (repeatable).",
                 show_default=False),
]  # fmt: skip
SinceOpt = Annotated[
    str | None,
    typer.Option("--since", help="From this local date or time, or a duration (7d, 12h).",
                 show_default=False),
]  # fmt: skip
UntilOpt = Annotated[
    str | None,
    typer.Option("--until", help="Before this local date or time, or a duration.",
                 show_default=False),
]  # fmt: skip
SubagentsOpt = Annotated[
    bool, typer.Option("--subagents/--no-subagents", help="Include subagent sessions.")
]
LabelOpt = Annotated[
    list[str] | None,
    typer.Option("--label", help="This session (label or id) and its subagents (repeatable).",
                 show_default=False),
]  # fmt: skip
UtcOpt = Annotated[
    bool, typer.Option("--utc", help="Dates in and out in UTC, not the local time zone.")
]


def session_filters(
    store: SessionStore,
    *,
    provider: list[str] | None,
    project: str | None,
    model: list[str] | None,
    since: str | None,
    until: str | None,
    subagents: bool,
    label: list[str] | None,
    utc: bool,
) -> SessionFilters:
    return build_session_filters(
        providers=provider or (),
        project=project,
        models=model or (),
        since=since,
        until=until,
        subagents=subagents,
        labels=label or (),
        utc=utc,
        store=store,
    )
