"""History another thread wrote into this rollout: which records are a copy, not this thread's own.

A fork, a spawned child and a resumed rollout (0.36 era) begin with a block copied from the
thread they came from: the rollout's own `session_meta`, then the source thread's `session_meta`
(seconds later for a resume; a nested copy carries several), then hundreds of the source's
records written in one burst, all stamped within a few hundred milliseconds. The copy ends at
the first record this thread writes itself, which comes after a pause: the next prompt, or the
model call whose answer and token count follow.

The rule: the block is the burst of records that follows the *last* `session_meta` of the head
of the file, each record within `BURST_GAP_MS` of the one before it; it ends at the first record
after a longer pause. (A running total that restarts is no end mark: the copied history can
hold restarts of its own.) A fork or spawned child whose rollout has no copied `session_meta`
(older writers) gets the same burst rule after its own `session_meta`. A thread that is none
of these has no copy: its own first records follow its `session_meta` within milliseconds and
are its own.

Messages of the block stay in the session, flagged `metadata.replayed_from`; its token counts
are the source thread's and are not counted here. The state is a small dict kept in the
builder's resume state, so an append continues where the last parse stopped.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from tracehouse.parsers.codex import records as rec

BURST_GAP_MS = 500  # copied records are written within milliseconds of each other

# Phases: before any session_meta; right after the own session_meta (another may follow);
# inside a copied block; this thread's own records.
START, HEAD, COPY, OWN = "start", "head", "copy", "own"


@dataclass
class CopiedHistory:
    phase: str = START
    anchor_ms: int | None = None  # the time of the last record of the burst so far
    source: str | None = None  # the thread the copy came from

    @classmethod
    def from_state(cls, state: dict[str, Any] | None) -> CopiedHistory:
        return cls(**state) if state else cls()

    def to_state(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def active(self) -> bool:
        return self.phase == COPY

    @property
    def deciding(self) -> bool:
        """Still at the head of the file or in a copy: records must be observed."""
        return self.phase != OWN

    def observe(
        self, kind: str, payload: dict[str, Any], ts: str | None, own: dict[str, Any]
    ) -> None:
        """Advance over one enveloped record. `own` is the thread's own (first) session_meta,
        already noted when `kind` is that first session_meta."""
        at = _millis(ts)
        if kind == "session_meta":
            if self.phase == START:
                self._own_meta(own, at)
            elif self.phase in (HEAD, COPY):
                self.phase, self.anchor_ms = COPY, at
                copied_id = payload.get("id")
                if isinstance(copied_id, str) and copied_id != own.get("id"):
                    self.source = copied_id
            return
        if self.phase == HEAD or (self.phase == COPY and not _within(self.anchor_ms, at)):
            self.phase = OWN
        elif self.phase == COPY:
            self.anchor_ms = at if at is not None else self.anchor_ms

    def _own_meta(self, own: dict[str, Any], at: int | None) -> None:
        self.anchor_ms = at
        parent = own.get("forked_from_id") or rec.spawn_parent(own)
        if parent:  # a fork or spawned child: its copy may come without the source's meta
            self.phase, self.source = COPY, str(parent)
        else:
            self.phase = HEAD


def _within(anchor: int | None, at: int | None) -> bool:
    if anchor is None or at is None:
        return at is None  # an untimed record cannot end the burst by a pause
    return at - anchor <= BURST_GAP_MS  # a clock stepping back is no pause


def _millis(ts: str | None) -> int | None:
    if not ts:
        return None
    try:
        return int(datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return None
