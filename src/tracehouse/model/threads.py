"""Threads: a session's turns cut into linear histories by their parent chain.

Most sessions are one thread. A Claude Code rewind or in-session fork gives a turn a second
child: the child that came first continues the thread, each later one starts a new thread at
that fork point. The active thread is the one holding the session's latest turn; what the user
sees as the conversation is the path from the first turn to it, across the threads it forked
from. Derived from `turns` alone, so the store rewrites a session's threads whenever its turns
change, and readers can work them out again.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from tracehouse.model.ids import stable_id


@dataclass(frozen=True)
class Thread:
    thread_id: str
    seq: int  # the order threads started in; 0 is the session's first
    turn_ids: tuple[str, ...]
    parent_thread_id: str | None  # the thread it forked from
    fork_turn_id: str | None  # the turn of that thread it continues from


Turn = tuple[str, str | None, int | None]  # (turn_id, parent_turn_id, seq)


def threads_of(session_id: str, turns: Iterable[Mapping[str, Any]]) -> list[Thread]:
    """`turns` (turn_id, parent_turn_id, seq) of one session, as its threads."""
    return session_threads(session_id, _triples(turns))[0]


def session_threads(session_id: str, turns: Iterable[Turn]) -> tuple[list[Thread], str | None]:
    """A session's threads and the active one (the thread holding its latest turn).

    The store works them out again at every import of the session, a live sync at every append,
    so this walks plain tuples once: a turn's thread continues with its first child, and each
    later child starts a thread forked from it."""
    rows = sorted(turns, key=_order)
    if not rows:
        return [], None
    known = {t[0] for t in rows}
    children: dict[str, list[str]] = {}
    roots: list[str] = []
    for turn, parent, _seq in rows:
        if parent in known:
            children.setdefault(parent, []).append(turn)  # type: ignore[arg-type]
        else:
            roots.append(turn)
    starts: deque[tuple[str, str | None, str | None]] = deque((r, None, None) for r in roots)
    walked: list[tuple[str, list[str], str | None, str | None]] = []
    while starts:
        first, parent_thread, fork = starts.popleft()
        thread_id = stable_id("thr", session_id, first)
        path, turn = [first], first
        kids = children.get(turn)
        while kids:
            if len(kids) > 1:
                starts.extend((other, thread_id, turn) for other in kids[1:])
            turn = kids[0]
            path.append(turn)
            kids = children.get(turn)
        walked.append((thread_id, path, parent_thread, fork))
    if len(walked) > 1:  # in the order their first turns came
        order = {t[0]: i for i, t in enumerate(rows)}
        walked.sort(key=lambda w: order[w[1][0]])
    threads = [Thread(thread_id, seq, tuple(path), parent, fork)
               for seq, (thread_id, path, parent, fork) in enumerate(walked)]  # fmt: skip
    latest = rows[-1][0]
    active = next((th.thread_id for th in threads if latest in th.turn_ids), None)
    return threads, active


def _triples(turns: Iterable[Mapping[str, Any]]) -> list[Turn]:
    return [(t["turn_id"], t["parent_turn_id"], t["seq"]) for t in turns]


def _order(turn: Turn) -> tuple[int, str]:
    return (turn[2] if turn[2] is not None else -1, turn[0])


def active_path(turns: Iterable[Mapping[str, Any]]) -> list[str]:
    """The turns of the conversation as it stands: from the first turn to the latest one."""
    rows = list(turns)
    if not rows:
        return []
    parent = {t["turn_id"]: t["parent_turn_id"] for t in rows}
    latest = max(rows, key=lambda t: (t["seq"] if t["seq"] is not None else -1, t["turn_id"]))
    path: list[str] = []
    seen: set[str] = set()  # a parent loop ends the path (a set: sessions run to 1,000s of turns)
    node: str | None = latest["turn_id"]
    while node is not None and node in parent and node not in seen:
        path.append(node)
        seen.add(node)
        node = parent[node]
    return path[::-1]


def thread_rows(
    session_id: str, threads: list[Thread], active: str | None
) -> list[tuple[Any, ...]]:
    """`threads` as rows of the `threads` table, in its column order."""
    return [
        (th.thread_id, session_id, th.seq, th.parent_thread_id, th.fork_turn_id, th.turn_ids[0],
         th.turn_ids[-1], len(th.turn_ids), th.thread_id == active)
        for th in threads
    ]  # fmt: skip


def active_view(detail: dict[str, Any], hint: str) -> dict[str, Any]:
    """`detail` (as `store.reads.session_detail` loads it) with only the active path's turns,
    and a notice where a branch leaves it, saying how to see it (`hint`). A session of one
    thread comes back as it is."""
    turns = detail["turns"]
    if len(threads_of(detail["session"]["session_id"], turns)) <= 1:
        return detail
    on_path = set(active_path(turns))
    off = {t["turn_id"] for t in turns} - on_path
    children: dict[str, list[str]] = {}
    for t in turns:
        if t["parent_turn_id"]:
            children.setdefault(t["parent_turn_id"], []).append(t["turn_id"])

    def size(turn: str) -> int:
        """Turns in the branch from `turn` on (walked, not recursed: a branch can be long)."""
        count, todo = 0, [turn]
        while todo:
            count += 1
            todo.extend(children.get(todo.pop(), []))
        return count

    prompts = {m["turn_id"]: m for m in reversed(detail["messages"]) if m["role"] == "user"}
    notices: dict[str, list[dict[str, Any]]] = {}
    for fork in on_path:
        for child in children.get(fork, []):
            if child in on_path:
                continue
            prompt = prompts.get(child)
            said = f", beginning “{str(prompt['content'] or '')[:80]}”" if prompt else ""
            text = (f"⎇ a branch of {size(child)} turn(s) leaves the conversation here{said};"
                    f" {hint} shows every branch")  # fmt: skip
            notices.setdefault(fork, []).append(_notice(child, fork, text, prompt))
    last_of_turn = {m["turn_id"]: i for i, m in enumerate(detail["messages"])}
    messages: list[dict[str, Any]] = []
    for i, m in enumerate(detail["messages"]):
        if m["turn_id"] in off:
            continue
        messages.append(m)
        if m["turn_id"] in notices and last_of_turn[m["turn_id"]] == i:
            messages.extend(notices.pop(m["turn_id"]))
    kept = {m["message_id"] for m in messages}
    return {
        **detail,
        "messages": messages,
        "tool_calls": [c for c in detail["tool_calls"] if c["turn_id"] not in off],
        "sources": [s for s in detail["sources"] if s["message_id"] in kept],
        "turns": [t for t in turns if t["turn_id"] not in off],
    }


def _notice(child: str, fork: str, text: str, prompt: dict[str, Any] | None) -> dict[str, Any]:
    """A host notice in a message's shape, so every renderer shows it as one."""
    row = dict.fromkeys(("source_message_id", "seq", "model", "thinking", "meta", "metadata",
                         "parent_message_id", "source_ref"))  # fmt: skip
    row.update(message_id=f"branch:{child}", turn_id=fork, role="system", message_type="host",
               content=text, created_at=prompt["created_at"] if prompt else None)  # fmt: skip
    return row
