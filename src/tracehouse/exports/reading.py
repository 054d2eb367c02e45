"""One session as a reader shows it: its transcript (as `sessions show` prints it, or as Markdown
as `export` writes it), with the sessions above and below it, so a reader can walk from a
subagent or a thread to its parent and back. What `browse` reads from a local ledger, and what a
gateway's `GET /v1/sessions/{label}/transcript` answers for a `browse` over it."""

from __future__ import annotations

from contextlib import suppress
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tracehouse.exports import markdown
from tracehouse.exports.transcript import focus, render
from tracehouse.store.reads import SessionNotFound, find_session, session_detail
from tracehouse.timespec import local_time

if TYPE_CHECKING:
    from tracehouse.redaction.redactor import Redactor
    from tracehouse.store.protocol import SessionStore

FORMATS = ("text", "markdown")


@dataclass(frozen=True)
class Reading:
    session: dict[str, Any]  # its row
    text: str
    parent: dict[str, Any] | None  # the parent's row: the session that spawned it
    children: list[dict[str, Any]]  # its subagents and threads, as `session_detail` lists them


def reading(
    store: SessionStore,
    ref: str,
    *,
    format: str = "text",
    at: str | None = None,
    thinking: bool = False,
    utc: bool = False,
    redactor: Redactor | None = None,
) -> Reading:
    """The session `ref` names (label, id or source id). `at` (a message or tool call id) cuts
    the text to the messages around it, marked as `sessions show --at` marks them; a hit in a
    part the transcript folds opens the whole. `redactor` redacts what the ledger still holds
    verbatim, as an export does."""
    if format not in FORMATS:
        raise ValueError(f"format {format!r}: one of {', '.join(FORMATS)}")
    detail = session_detail(store, find_session(store, ref)["session_id"])
    if redactor is not None:
        from tracehouse.redaction.rows import ExportTally, redact_detail

        redact_detail(redactor, detail, ExportTally())
    if format == "markdown":
        text = markdown.render(
            detail, link=lambda _: None, when=lambda iso: local_time(iso, utc=utc) or "?"
        )
    else:
        shown = detail
        if at is not None:
            with suppress(LookupError):
                shown = focus(detail, at)
        text = render(shown, show_thinking=thinking)
    parent_id = detail["session"].get("parent_session_id")
    parent = None
    if parent_id:
        with suppress(SessionNotFound):  # a parent the ledger never read
            parent = find_session(store, str(parent_id))
    return Reading(detail["session"], text, parent, detail["children"])
