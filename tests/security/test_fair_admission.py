"""The places inside the gateway split among the callers there (issue #63): a crowd on one
token that already holds its share cannot take the place another caller's request frees, so a
teammate's read beside a crowd and stalled uploads is let in, not answered `503`."""

from __future__ import annotations

import asyncio

from starlette.types import Message, Receive, Scope, Send

from tracehouse.gateway.security import Admission


def _scope(token: str, body: bool = False) -> Scope:
    headers = [(b"authorization", f"Bearer {token}".encode())]
    if body:
        headers.append((b"content-length", b"1000"))
    return {"type": "http", "path": "/v1/sessions", "headers": headers}


class _Held:
    """An app whose requests stay inside until let go, one at a time per caller."""

    def __init__(self) -> None:
        self.gates: dict[bytes, asyncio.Semaphore] = {}

    def let_go(self, token: str, count: int = 1) -> None:
        for _ in range(count):
            self._gate(f"Bearer {token}".encode()).release()

    def _gate(self, caller: bytes) -> asyncio.Semaphore:
        return self.gates.setdefault(caller, asyncio.Semaphore(0))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._gate(dict(scope["headers"])[b"authorization"]).acquire()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})


async def _status(gate: Admission, scope: Scope) -> int:
    answers: list[int] = []

    async def receive() -> Message:
        await asyncio.sleep(3600)
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        if message["type"] == "http.response.start":
            answers.append(message["status"])

    await gate(scope, receive, send)
    return answers[0]


def _enter(gate: Admission, token: str, count: int = 1) -> list[asyncio.Task[int]]:
    return [asyncio.create_task(_status(gate, _scope(token))) for _ in range(count)]


def test_a_crowd_leaves_the_place_it_frees_to_the_others() -> None:
    async def run() -> list[int]:
        app = _Held()
        gate = Admission(app, limit=8)
        crowd = _enter(gate, "crowd", 4)  # alone, a caller may hold half the places
        others = _enter(gate, "pusher-1") + _enter(gate, "pusher-2") + _enter(gate, "bob", 2)
        await asyncio.sleep(0)
        assert gate.inside == 8
        app.let_go("crowd")  # one of the crowd's reads is answered; its place is free
        await asyncio.sleep(0.01)
        assert gate.inside == 7
        # The crowd, above its share among four callers, may not take the place back ...
        refused = asyncio.wait_for(_status(gate, _scope("crowd")), 1.0)
        assert await refused == 503
        # ... so the teammate's read, arriving after it, gets in.
        teammate = _enter(gate, "teammate")
        await asyncio.sleep(0)
        for token, count in [("crowd", 3), ("pusher-1", 1), ("pusher-2", 1), ("bob", 2)]:
            app.let_go(token, count)
        app.let_go("teammate")
        return [await task for task in teammate + crowd + others]

    assert asyncio.run(run()) == [200] * 9


def test_a_caller_with_nothing_inside_finds_a_place_beyond_a_full_house() -> None:
    async def run() -> list[int]:
        app = _Held()
        gate = Admission(app, limit=8)  # and one place in reserve
        tasks = _enter(gate, "crowd", 4) + [_enter(gate, f"pusher-{n}")[0] for n in range(4)]
        await asyncio.sleep(0)
        assert gate.inside == 8
        tasks += _enter(gate, "teammate")
        await asyncio.sleep(0)
        assert gate.inside == 9
        refused = await asyncio.wait_for(_status(gate, _scope("late")), 1.0)
        app.let_go("crowd", 4)
        app.let_go("teammate")
        for n in range(4):
            app.let_go(f"pusher-{n}")
        return [refused] + [await task for task in tasks]

    assert asyncio.run(run()) == [503] + [200] * 9


def test_a_caller_alone_may_hold_half_the_places_and_no_more() -> None:
    async def run() -> list[int]:
        app = _Held()
        gate = Admission(app, limit=8)
        tasks = _enter(gate, "crowd", 6)
        await asyncio.sleep(0)
        app.let_go("crowd", 6)
        return sorted([await task for task in tasks])

    assert asyncio.run(run()) == [200] * 4 + [503] * 2


def test_stalled_uploads_of_one_token_keep_to_their_quarter() -> None:
    async def run() -> tuple[int, int]:
        gate = Admission(_Held(), limit=8)
        tasks = [asyncio.create_task(_status(gate, _scope("bob", body=True))) for _ in range(3)]
        await asyncio.sleep(0)
        inside = gate.inside
        for task in tasks:
            task.cancel()
        return inside, sum(gate.uploading.values())

    assert asyncio.run(run()) == (2, 2)
