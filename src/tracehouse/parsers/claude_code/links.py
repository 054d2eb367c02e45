"""The DAG links of a Claude Code transcript: which message a line's `parentUuid` stands for.

`links` maps the last LINK_WINDOW line uuids to what a child line's parent link becomes: a
message id, OWN (the line's own message, whose id derives from its uuid), NO_MESSAGE (no message
at or above it: a root hook line), or "?<uuid>" (a line whose own parent is written later in the
file). `turn_of` maps the same uuids to the turn each was written in, for the turn chain. Both
windows are trimmed after every line and kept whole in the resume state, so a parse in one go
and in any chunks link alike. A parent that cannot be resolved is NULL, with the reason in the
message's metadata, never a guessed id.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from tracehouse.model import ids
from tracehouse.parsers.claude_code.discover import PROVIDER

LINK_WINDOW = 512  # line uuids a later line may name as its parent (real gaps: ≤ 400 lines)
OWN, NO_MESSAGE = "=", ""


class Links:
    def __init__(self, sid: str, state: dict[str, Any]) -> None:
        self.sid = sid
        self.links: OrderedDict[str, str] = OrderedDict(state.get("links", []))
        self.turn_of: OrderedDict[str, str] = OrderedDict(state.get("turn_of", []))

    def __contains__(self, uuid: str) -> bool:
        """A line uuid among the last LINK_WINDOW lines seen (a repeat, after an append)."""
        return uuid in self.links

    def link(self, r: dict[str, Any], row: dict[str, Any] | None, turn_id: str | None) -> None:
        """Remember what a line uuid stands for: its own message, or its nearest ancestor's."""
        uuid = r.get("uuid")
        if not isinstance(uuid, str):
            return
        if row is not None:  # a message keyed by the line's uuid has the id OWN stands for
            own = row["source_message_id"] == uuid
            self.remember(uuid, OWN if own else row["message_id"], turn_id)
            return
        parent = r.get("parentUuid")
        if not isinstance(parent, str):
            self.remember(uuid, NO_MESSAGE, turn_id)
            return
        target = self.links.get(parent)
        if target == OWN:
            target = ids.message_id(PROVIDER, self.sid, parent)
        self.remember(uuid, f"?{parent}" if target is None else target, turn_id)

    def remember(self, uuid: str, target: str, turn_id: str | None) -> None:
        self.links[uuid] = target
        self.links.move_to_end(uuid)
        while len(self.links) > LINK_WINDOW:
            self.links.popitem(last=False)
        if turn_id is not None:
            self.turn_of[uuid] = turn_id
            self.turn_of.move_to_end(uuid)
            while len(self.turn_of) > LINK_WINDOW:
                self.turn_of.popitem(last=False)

    def parent(self, parent_uuid: Any) -> tuple[str | None, str | None]:
        """(message id of the parent, or None with the reason)."""
        if not isinstance(parent_uuid, str):
            return None, None
        key = parent_uuid
        for _hop in range(LINK_WINDOW):
            target = self.links.get(key)
            if target is None:
                later = key != parent_uuid
                return None, "written later in the file" if later else "not among the lines before"
            if target == NO_MESSAGE:
                return None, "no message above it"
            if target == OWN:
                return ids.message_id(PROVIDER, self.sid, key), None
            if not target.startswith("?"):
                return target, None
            key = target[1:]
        return None, "link cycle"

    def parent_turn(self, r: dict[str, Any]) -> str | None:
        """The turn a prompt continues: the one its `parentUuid` line was written in. Usually
        the turn before; after a rewind or an in-session fork, the turn the conversation went
        back to, so two turns share a parent and the history branches."""
        parent = r.get("parentUuid")
        return self.turn_of.get(parent) if isinstance(parent, str) else None

    def to_state(self) -> dict[str, Any]:
        return {"links": list(self.links.items()), "turn_of": list(self.turn_of.items())}
