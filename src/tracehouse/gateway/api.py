"""The gateway's `/v1` routes: `sessions.import` in, the ledger out. Each is as thin as a CLI
command: it checks the token's scope, hands the request to the library, and says what came
back. The request and response documents are declared in `gateway/openapi.py`."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Annotated, Any

import orjson
from fastapi import APIRouter, Depends, Header, HTTPException, Request
from fastapi.responses import Response

from tracehouse import __version__
from tracehouse.config import MACHINE
from tracehouse.errors import RequestError
from tracehouse.gateway import openapi, ownership
from tracehouse.gateway.deps import Admin, Anyone, Ledger, Probe, Pusher
from tracehouse.gateway.tokens import Grant
from tracehouse.gateway.views import (
    sessions_holding,
)
from tracehouse.model import codec, push_wire
from tracehouse.model.contract import ImportBatch, ImportResponse, pushed_key
from tracehouse.pipeline.requests import apply_request
from tracehouse.redaction.rows import redact_batch
from tracehouse.store.protocol import RunTotals, SessionStore

if TYPE_CHECKING:
    from tracehouse.redaction.redactor import Redactor


def known_query(request: Request) -> None:
    """A query parameter the route does not declare is a 400, not ignored: a typo in a filter
    would otherwise answer as if there were none."""
    route = request.scope.get("route")
    allowed = {p.alias for p in getattr(getattr(route, "dependant", None), "query_params", [])}
    for name in request.query_params:
        if name not in allowed:
            raise RequestError(f"unknown query parameter {name!r}")


router = APIRouter(prefix="/v1", dependencies=[Depends(known_query)])
MACHINE_PATTERN = f"^{MACHINE.pattern}$"  # pydantic searches; a machine name is the whole value


def json_answer(value: Any, status: int = 200) -> Response:
    return Response(orjson.dumps(value), status_code=status, media_type="application/json")


async def upload(request: Request) -> bytes:
    """The request's body, read (within the size limit) before the route takes its store."""
    return await _body(request, request.app.state.config.max_request_bytes)


Upload = Annotated[bytes, Depends(upload)]


@router.get("/health", responses=openapi.responses("Health"), tags=["gateway"])
async def health(request: Request, store: Probe) -> Response:
    """Whether the gateway can reach its store; no token needed."""
    config = request.app.state.config
    # A database that went away is a 503, not a stale "ok". On a thread of its own, not in the
    # pools the other routes and their token checks queue for: health answers while they wait.
    thread = getattr(request.app.state, "probe_thread", None)  # None: served with no lifespan
    await asyncio.get_running_loop().run_in_executor(thread, store.query, "SELECT 1 AS ok")
    return json_answer(
        {
            "ok": True,
            "version": __version__,
            "backend": store.backend,
            "schemaVersion": store.schema_version,
            "maxRequestBytes": config.max_request_bytes,
        }
    )


@router.post(
    "/sessions.import",
    responses=openapi.responses("ImportResponse", 400, 401, 403, 409, 413, 503),
    openapi_extra=openapi.import_body(),
    tags=["import"],
)
async def sessions_import(
    request: Request,
    grant: Pusher,
    data: Upload,
    store: Ledger,
    idempotency_key: Annotated[str | None, Header(alias="Idempotency-Key")] = None,
    machine: Annotated[str | None, Header(alias="X-Tracehouse-Machine")] = None,
    redaction: Annotated[str | None, Header(alias="X-Tracehouse-Redaction")] = None,
) -> Response:
    """Apply a `sessions.import` request: each item on its own, results in request order. A
    pusher (`sync --store https://…`, with X-Tracehouse-Machine) may add its cursors, rejects
    and clears, committed with the rows and keyed by its machine. A push token writes as its
    own machine only: an item naming another machine's session or rows is refused alone."""
    from starlette.concurrency import run_in_threadpool

    if machine is not None and not MACHINE.fullmatch(machine):
        raise RequestError("X-Tracehouse-Machine: 1–64 letters, digits, '.', '_' or '-'")
    own = ownership.machine_of(grant, machine)
    redactor = _redactor_for(request, redaction)
    if machine is None:  # a producer of its own: the token names where the sessions came from
        batch = _keyed(codec.decode_request(data), idempotency_key, grant)
        stamped = tuple(replace(i, session={**i.session, "host": own}) for i in batch.items)
        batch = replace(batch, items=stamped, run_id=ownership.scoped_run(own, batch.run_id))
        response = await run_in_threadpool(_apply_plain, store, batch, len(data), own, redactor)
        request.app.state.embedding.after_write()
    else:  # a sync's run spans many requests: it starts and finishes the run itself
        response = await run_in_threadpool(
            _apply_push, store, data, own, idempotency_key, grant, redactor
        )
    return json_answer({**response.to_json(), "replayed": response.replayed})


def _redactor_for(request: Request, said: str | None) -> Redactor | None:
    """What redacts this request on arrival: the gateway's redactor, unless the pusher says it
    sent its history unredacted (`redact = false`) and this gateway's operator allows that."""
    if said not in (None, "on", "off"):
        raise RequestError("X-Tracehouse-Redaction: on or off")
    config = request.app.state.config
    if said == "off":
        if not config.allow_unredacted:
            raise HTTPException(
                403,
                "this gateway stores no unredacted history: sync with redaction on (remove"
                " `redact = false` or --no-redact), or ask its operator for"
                " `serve --allow-unredacted`",
            )
        return None
    redactor: Redactor | None = request.app.state.redactor
    return redactor


def _apply_plain(
    store: SessionStore, batch: ImportBatch, size: int, machine: str, redactor: Redactor | None
) -> ImportResponse:
    batch = redact_batch(redactor, batch) if redactor is not None else batch
    return apply_request(store, _owned(store, batch, machine), size)


def _apply_push(
    store: SessionStore,
    data: bytes,
    machine: str,
    key: str | None,
    grant: Grant,
    redactor: Redactor | None,
) -> ImportResponse:
    batch = push_wire.decode_push(data, machine, partial(sessions_holding, store))
    batch = replace(_keyed(batch, key, grant), run_id=ownership.scoped_run(machine, batch.run_id))
    batch = redact_batch(redactor, batch) if redactor is not None else batch
    return store.import_batch(_owned(store, batch, machine))


def _owned(store: SessionStore, batch: ImportBatch, machine: str) -> ImportBatch:
    return ownership.without(batch, ownership.foreign(store, batch, machine))


async def _body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise HTTPException(413, f"request of {int(declared):,} bytes: the limit is {limit:,}")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise HTTPException(413, f"request over the limit of {limit:,} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def _keyed(batch: ImportBatch, header: str | None, grant: Grant) -> ImportBatch:
    """The request's idempotency key (header or field), kept per token."""
    if header is not None and batch.idempotency_key not in (None, header):
        raise RequestError("Idempotency-Key header and idempotencyKey field differ")
    key = header if header is not None else batch.idempotency_key
    return replace(batch, idempotency_key=ownership.scoped_key(grant, key))


@router.post("/cursors", responses=openapi.responses("Cursors", 400, 401, 403), tags=["push"])
def cursors(
    body: openapi.CursorsRequest,
    grant: Pusher,
    store: Ledger,
    machine: Annotated[
        str | None, Header(alias="X-Tracehouse-Machine", pattern=MACHINE_PATTERN)
    ] = None,
) -> Response:
    """The cursors (or resume states) this machine has pushed, by unit key."""
    prefix = pushed_key(ownership.machine_of(grant, machine), "")
    keys = None if body.unitKeys is None else [prefix + k for k in body.unitKeys]
    if body.states:
        found = store.watermark_states(body.sourceProvider, keys or [])
    else:
        found = store.watermarks(body.sourceProvider, keys)
    return json_answer(
        {"cursors": {k[len(prefix) :]: v for k, v in found.items() if k.startswith(prefix)}}
    )


@router.post("/units.missing", responses=openapi.responses("Flagged", 400, 401, 403), tags=["push"])
def units_missing(
    body: openapi.MissingRequest,
    grant: Pusher,
    store: Ledger,
    machine: Annotated[
        str | None, Header(alias="X-Tracehouse-Machine", pattern=MACHINE_PATTERN)
    ] = None,
) -> Response:
    """Flag the sessions of units gone from this machine (nothing is deleted)."""
    own = ownership.machine_of(grant, machine)
    run_id = ownership.scoped_run(own, body.runId)
    flagged = store.mark_missing(body.sourceProvider, body.unitKeys, body.at, run_id, own)
    return json_answer({"flagged": flagged})


@router.post(
    "/rejects.unresolved", responses=openapi.responses("UnitKeys", 400, 401, 403), tags=["push"]
)
def unresolved_rejects(
    body: openapi.RejectsRequest,
    grant: Pusher,
    store: Ledger,
    machine: Annotated[
        str | None, Header(alias="X-Tracehouse-Machine", pattern=MACHINE_PATTERN)
    ] = None,
) -> Response:
    """This machine's units with an unresolved reject at a location (sync resolves them)."""
    prefix = pushed_key(ownership.machine_of(grant, machine), "")
    keys = store.unresolved_rejects(body.sourceProvider, body.location)
    return json_answer({"unitKeys": [k[len(prefix) :] for k in keys if k.startswith(prefix)]})


@router.get("/whoami", responses=openapi.responses("Whoami", 401), tags=["gateway"])
def whoami(request: Request, grant: Anyone) -> Response:
    """The token's name, scope and, for a push token, the machine it writes as: a pusher takes
    its machine from here; and whether this gateway takes unredacted pushes."""
    allowed = bool(request.app.state.config.allow_unredacted)
    return json_answer(
        {"name": grant.name, "scope": grant.scope, "machine": grant.machine, "unredacted": allowed}
    )


@router.post("/sessions.move", responses=openapi.responses("Moved", 400, 401, 403), tags=["admin"])
def sessions_move(body: openapi.MoveRequest, grant: Admin, store: Ledger) -> Response:
    """Give every session of one machine, and its cursors, to another (a laptop replaced)."""
    moved = ownership.move_sessions(store, body.fromMachine, body.toMachine)
    return json_answer({"moved": moved})


@router.post("/runs", responses=openapi.responses("Done", 400, 401, 403), tags=["push"])
def start_run(body: openapi.RunStart, grant: Pusher, store: Ledger) -> Response:
    """Open a sync's run in the gateway's run log (`tracehouse runs`), under its machine."""
    store.start_run(ownership.scoped_run(ownership.machine_of(grant, None), body.runId), body.mode)
    return json_answer({"ok": True})


@router.post(
    "/runs/{run_id}/finish", responses=openapi.responses("Done", 400, 401, 403), tags=["push"]
)
def finish_run(
    request: Request, run_id: str, body: openapi.RunFinish, grant: Pusher, store: Ledger
) -> Response:
    """Close a sync's run with the totals its pusher counted (only its own machine's)."""
    totals = RunTotals(
        bytes_read=body.bytesRead,
        rejects=body.rejects,
        dedupe_hits=body.dedupeHits,
        retry_reasons=body.retryReasons,
        tail_lag_ms=body.tailLagMs,
        tail_lag_p50_ms=body.tailLagP50Ms,
        error=body.error,
        redactions=body.redactions,
    )
    store.finish_run(ownership.scoped_run(ownership.machine_of(grant, None), run_id), totals)
    request.app.state.embedding.after_write()  # the run's rows, once it is whole
    return json_answer({"ok": True})
