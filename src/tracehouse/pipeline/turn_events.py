"""What `sync live --events` prints: a line when a turn comes in and when it ends, read from the
batches the watcher commits (nothing is read back from the ledger, so a gateway store works too).

A line names the session's label, the turn's number, how its prompt arrived (the message's
attribution `source`: `exec`, `task`, … and `rpc` where the agent recorded none) and the first
80 characters of the prompt or, when it ended, of the answer. A source that re-sends a whole
session on each change (a database) re-sends turns that ended long ago: a turn is told of only
if it began after the watcher started (less `GRACE`), and each event once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson

from tracehouse.model.contract import ImportBatch, ImportResponse
from tracehouse.model.tables import TABLES_BY_NAME
from tracehouse.shown import escaped_line

PREVIEW = 80
GRACE = timedelta(seconds=60)  # a turn begun just before the watcher caught up still counts


@dataclass(frozen=True)
class TurnEvent:
    kind: str  # "started" or "ended"
    label: str
    seq: int
    source: str
    preview: str
    status: str | None = None

    def line(self) -> str:
        how = f"{self.kind} ({self.status})" if self.kind == "ended" and self.status else self.kind
        said = f"{self.label} turn {self.seq} {how} · {self.source} · {self.preview}"
        return escaped_line(said)  # what a session says is data: no terminal codes reach the screen


@dataclass
class TurnEvents:
    """The events of each committed batch, each told once."""

    since: str = field(default_factory=lambda: _iso(datetime.now(UTC) - GRACE))
    told: set[tuple[str, str]] = field(default_factory=set)

    def of(self, batch: ImportBatch, response: ImportResponse) -> list[TurnEvent]:
        labels = _labels(batch, response)
        messages = {row["message_id"]: row for row in _rows(batch, "messages")}
        events = []
        for turn in _rows(batch, "turns"):
            started = turn["started_at"] or ""
            label = labels.get(turn["session_id"])
            if label is None or started < self.since:
                continue
            for event in _events(turn, label, messages):
                key = (turn["turn_id"], event.kind)
                if key not in self.told:
                    self.told.add(key)
                    events.append(event)
        return events


def printer(write: Callable[[str], None]) -> Callable[[ImportBatch, ImportResponse], None]:
    """A sync's `on_commit` that writes each new event's line."""
    events = TurnEvents()

    def on_commit(batch: ImportBatch, response: ImportResponse) -> None:
        for event in events.of(batch, response):
            write(event.line())

    return on_commit


def _events(
    turn: Mapping[str, Any], label: str, messages: Mapping[str, Mapping[str, Any]]
) -> Iterator[TurnEvent]:
    prompt = next((messages[i] for i in _ids(turn["query_message_ids"]) if i in messages), None)
    source = _source(prompt)
    yield TurnEvent("started", label, turn["seq"], source, _preview(prompt))
    # A prompt alone is a turn the agent has not answered yet, whatever its parser dates it.
    if turn["response_message_id"] or turn["status"] in ("aborted", "error"):
        answer = messages.get(turn["response_message_id"] or "")
        yield TurnEvent("ended", label, turn["seq"], source, _preview(answer), turn["status"])


def _labels(batch: ImportBatch, response: ImportResponse) -> dict[str, str]:
    """session_id → the label the store gave it, for the items it took."""
    by_source = {
        (r.source_provider, r.source_session_id): r.session_label
        for r in response.results
        if r.session_label and r.status != "failed"
    }
    return {
        item.session["session_id"]: label
        for item in batch.items
        if (label := by_source.get((item.source_provider, item.source_session_id)))
        and item.session.get("session_id")
    }


def _rows(batch: ImportBatch, table: str) -> Iterator[dict[str, Any]]:
    names = TABLES_BY_NAME[table].names
    for values in batch.tuples(table):
        yield dict(zip(names, values, strict=True))


def _ids(stored: Any) -> list[str]:
    if isinstance(stored, (bytes, str)) and stored:
        try:
            found = orjson.loads(stored)
        except orjson.JSONDecodeError:
            return []
        return [i for i in found if isinstance(i, str)] if isinstance(found, list) else []
    return list(stored) if isinstance(stored, (list, tuple)) else []


def _source(prompt: Mapping[str, Any] | None) -> str:
    meta = prompt.get("meta") if prompt else None
    if isinstance(meta, (bytes, str)) and meta:
        try:
            meta = orjson.loads(meta)
        except orjson.JSONDecodeError:
            meta = None
    source = meta.get("source") if isinstance(meta, dict) else None
    return str(source) if source else "rpc"


def _preview(message: Mapping[str, Any] | None) -> str:
    text = message.get("content") if message else None
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    flat = " ".join((text or "").split())
    return flat if len(flat) <= PREVIEW else flat[: PREVIEW - 1] + "…"


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
