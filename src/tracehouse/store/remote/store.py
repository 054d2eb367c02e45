"""A gateway as a session store: `sync backfill|live --store https://host:8765` pushes through it.

It is the same door as a local store's (`SessionStore`), with the same promise: each batch's
rows, cursors and rejects are committed together, by the gateway, in one transaction of its
store; the cursors are the gateway's, keyed by this machine (`pushed_key`), so a laptop killed
mid-batch, a gateway killed mid-request or a cut connection leaves nothing half-done, and the
next run starts where the last commit left off. A batch larger than the gateway's request limit
is sent in parts, each whole items with their own cursors; the cursors of units with no item
ride with the last part.

Only what sync needs goes over the wire. Reading the ledger (`sessions`, `search`, `export`)
is done on the gateway's API and web view, or with `--store` naming its database.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import replace
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

import orjson

from tracehouse.config import MACHINE
from tracehouse.errors import ConfigError, StoreError
from tracehouse.model.contract import ImportBatch, ImportResponse, ItemResult
from tracehouse.model.push_wire import encode_push
from tracehouse.model.tables import TABLES_BY_NAME
from tracehouse.retrying import RetryLog
from tracehouse.search.hits import Hit, SearchFilters
from tracehouse.store.items import unit_cursors_to_save
from tracehouse.store.location import without_token
from tracehouse.store.protocol import RunTotals, StoreInfo, Tx
from tracehouse.store.remote.http import Gateway

if TYPE_CHECKING:
    from tracehouse.search.embedders import Embedder
    from tracehouse.search.semantic import Status

T = TypeVar("T")


def gateway_address(url: str, token_file: str, machine: str) -> str:
    """What `--store https://…` opens: the URL with the token read from `token_file` (a URL
    that already carries one is kept as it is)."""
    if urlsplit(url).password:
        return url
    if not token_file:
        raise ConfigError(
            f"--store {without_token(url)}: a gateway needs a token (a push token to sync, a"
            " read token to browse): --token-file F (or token_file in the config);"
            " `tracehouse serve tokens add` makes one"
        )
    path = os.path.expanduser(token_file)
    try:
        with open(path, encoding="utf-8") as f:
            mode = os.fstat(f.fileno()).st_mode
            if mode & 0o077 and os.name == "posix":  # a token others can read is a leaked one
                raise ConfigError(
                    f"--token-file {token_file}: readable by others (mode {mode & 0o777:04o});"
                    f" make it yours alone: chmod 600 {token_file}"
                )
            token = f.read().strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"--token-file {token_file}: cannot be read: {exc}") from None
    if not token or any(c.isspace() for c in token):
        raise ConfigError(f"--token-file {token_file}: expected one token on one line")
    return address_with(url, token, machine)


def address_with(url: str, token: str, machine: str) -> str:
    """The URL a worker process reopens the gateway from: the token in the user info (never
    shown: `without_token`), the machine in the query."""
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    query = urlencode([*parse_qsl(parts.query), ("machine", machine)])
    return urlunsplit(parts._replace(netloc=f":{quote(token, safe='')}@{host}", query=query))


def unredacted(address: str) -> str:
    """The address of a pusher whose history is not redacted (`redact = false`): it says so to
    the gateway, which refuses it unless its operator allows unredacted pushes."""
    parts = urlsplit(address)
    query = urlencode([*parse_qsl(parts.query), ("redaction", "off")])
    return urlunsplit(parts._replace(query=query))


class GatewayStore:
    backend = "gateway"
    concurrent_writes = True

    def __init__(self, address: str) -> None:
        parts = urlsplit(address)
        token = unquote(parts.password or "")
        if not token:
            raise ConfigError(
                f"--store {without_token(address)}: a gateway needs a push token"
                " (--token-file F, or token_file in the config)"
            )
        query = dict(parse_qsl(parts.query))
        machine = query.pop("machine", "")
        redaction = query.pop("redaction", "on")
        if not MACHINE.fullmatch(machine):
            raise ConfigError(f"machine {machine!r}: expected 1–64 letters, digits, '.', '_', '-'")
        self.address = address
        self.location = without_token(address)
        self.machine = machine
        self.retry_log = RetryLog()
        base = urlunsplit(
            parts._replace(netloc=parts.netloc.rpartition("@")[2], query=urlencode(query))
        )
        self.gateway = Gateway(base, token, machine, self.location, self.retry_log)
        self.gateway.client.headers["X-Tracehouse-Redaction"] = redaction
        health = self.gateway.call("GET", "/v1/health")
        self.schema_version = int(health.get("schemaVersion", 0))
        self.max_request_bytes = int(health.get("maxRequestBytes", 32 * 2**20))
        # A push token writes as the machine it was issued for: that name, not this host's,
        # keys the cursors and owns the sessions.
        whoami = self.gateway.call("GET", "/v1/whoami")
        if redaction == "off" and whoami.get("unredacted") is not True:
            raise ConfigError(
                f"{self.location} stores no unredacted history: sync with redaction on (remove"
                " `redact = false` or --no-redact), or ask its operator for"
                " `serve --allow-unredacted`"
            )
        bound = whoami.get("machine")
        if isinstance(bound, str) and MACHINE.fullmatch(bound) and bound != machine:
            self.machine = bound
            self.gateway.client.headers["X-Tracehouse-Machine"] = bound

    # -- what sync writes -------------------------------------------------------------------

    def import_group(
        self, *, builders: bool = False
    ) -> AbstractContextManager[Callable[[ImportBatch], ImportResponse]]:
        return nullcontext(self.import_batch)  # a transaction each: nothing gained by more

    def import_batch(self, batch: ImportBatch) -> ImportResponse:
        body = encode_push(batch)
        if len(body) <= self.max_request_bytes:
            return self._send(body)
        return self._send_in_parts(batch)

    def _send(self, body: bytes) -> ImportResponse:
        answer = self.gateway.call("POST", "/v1/sessions.import", body)
        return ImportResponse.from_json(answer, replayed=bool(answer.get("replayed")))

    def _send_in_parts(self, batch: ImportBatch) -> ImportResponse:
        """Whole items per request, halving until each fits; an item too large alone fails
        here, and its unit keeps its old cursor so the next run tries it again."""
        results: list[ItemResult] = []
        too_large = []
        parts = [batch.items]
        while parts:
            items = parts.pop(0)
            part = _part(batch, items, last=False)
            body = encode_push(part)
            if len(body) <= self.max_request_bytes:
                results.extend(self._send(body).results)
            elif len(items) > 1:
                half = len(items) // 2
                parts[:0] = [items[:half], items[half:]]
            else:
                (item,) = items
                too_large.append(item)
                results.append(
                    ItemResult(
                        item.source_provider,
                        item.source_session_id,
                        None,
                        "failed",
                        f"{len(body):,} bytes encoded: over the gateway's limit of"
                        f" {self.max_request_bytes:,} bytes a request",
                    )
                )
        rest = replace(
            _part(batch, (), last=True),
            watermarks=tuple(unit_cursors_to_save(batch.watermarks, too_large)),
        )
        if rest.watermarks or rest.rejects or rest.clears:
            self._send(encode_push(rest))
        return ImportResponse(batch.run_id, batch.in_request_order(results))

    def watermarks(
        self, provider: str, unit_keys: Iterable[str] | None = None
    ) -> dict[str, dict[str, Any]]:
        keys = None if unit_keys is None else list(unit_keys)
        return dict(self._cursors(provider, keys, "cursors"))

    def watermark_states(self, provider: str, unit_keys: Iterable[str]) -> dict[str, Any]:
        return dict(self._cursors(provider, list(unit_keys), "states"))

    def _cursors(self, provider: str, keys: list[str] | None, what: str) -> Mapping[str, Any]:
        body = {"sourceProvider": provider, "unitKeys": keys, "states": what == "states"}
        answer = self.gateway.call("POST", "/v1/cursors", orjson.dumps(body))
        return dict(answer["cursors"])

    def mark_missing(
        self,
        provider: str,
        unit_keys: Iterable[str],
        at: str,
        run_id: str,
        machine: str | None = None,
    ) -> int:
        body = {"sourceProvider": provider, "unitKeys": list(unit_keys), "at": at, "runId": run_id}
        answer = self.gateway.call("POST", "/v1/units.missing", orjson.dumps(body))
        return int(answer["flagged"])

    def unresolved_rejects(self, provider: str, location: str) -> list[str]:
        body = {"sourceProvider": provider, "location": location}
        answer = self.gateway.call("POST", "/v1/rejects.unresolved", orjson.dumps(body))
        return list(answer["unitKeys"])

    def start_run(self, run_id: str, mode: str) -> None:
        self.gateway.call("POST", "/v1/runs", orjson.dumps({"runId": run_id, "mode": mode}))

    def finish_run(self, run_id: str, totals: RunTotals) -> None:
        reasons = dict(totals.retry_reasons)
        for reason, count in self.retry_log.take().items():
            reasons[reason] = reasons.get(reason, 0) + count
        body = {
            "bytesRead": totals.bytes_read,
            "rejects": totals.rejects,
            "dedupeHits": totals.dedupe_hits,
            "retryReasons": reasons,
            "tailLagMs": totals.tail_lag_ms,
            "tailLagP50Ms": totals.tail_lag_p50_ms,
            "error": totals.error,
            "redactions": dict(totals.redactions),
        }
        self.gateway.call("POST", f"/v1/runs/{quote(run_id)}/finish", orjson.dumps(body))

    def info(self) -> StoreInfo:
        return StoreInfo(self.location, self.backend, self.schema_version, {})

    def pending_migrations(self) -> list[str]:
        return []  # the gateway migrates its own store when it starts

    def migrate(self) -> list[str]:
        return []

    def compact(self) -> None:
        self._elsewhere("compacting the ledger")

    def close(self) -> None:
        self.gateway.close()

    # -- what is read and changed on the gateway itself -------------------------------------

    def _elsewhere(self, what: str) -> NoReturn:
        raise StoreError(
            f"{self.location} is a gateway: it takes pushes from sync only. {what} on the"
            " gateway's API or web view, or with --store naming the gateway's own database."
        )

    def add_absent(self, table: str, rows: Iterable[Mapping[str, Any]]) -> int:
        self._elsewhere("Copy a ledger")

    def save_export_mark(self, target: str, format: str, exported_at: str, sessions: int) -> None:
        self._elsewhere("Export")

    def delete_sessions(self, session_ids: Sequence[str], deleted_at: str) -> dict[str, int]:
        self._elsewhere("Delete sessions")

    def restore_sessions(self, session_ids: Sequence[str]) -> list[dict[str, Any]]:
        self._elsewhere("Restore sessions")

    def write(self, work: Callable[[Tx], T]) -> T:
        self._elsewhere("Manage tokens")

    def rows(self, table: str) -> Iterator[dict[str, Any]]:
        self._elsewhere("Read the ledger")

    def row_chunks(self, table: str, size: int = 1000) -> Iterator[list[tuple[Any, ...]]]:
        self._elsewhere("Read the ledger")

    def query(self, sql: str, params: Iterable[Any] = ()) -> list[dict[str, Any]]:
        self._elsewhere("Read the ledger")

    def search(
        self,
        query: str,
        filters: SearchFilters | None = None,
        *,
        mode: str = "lexical",
        embedder: Embedder | None = None,
    ) -> list[Hit]:
        self._elsewhere("Search (GET /v1/search)")

    def embedding_model(self) -> str | None:
        self._elsewhere("Search (GET /v1/search)")

    def embedding_status(self) -> Status:
        self._elsewhere("Search by meaning (`tracehouse doctor` on the gateway's machine)")

    def embedding_backlog(self, *, wrote: bool = True) -> int:
        return 0  # the gateway embeds what is pushed to it

    def embed_backlog(
        self, embedder: Embedder, progress: Callable[[int, int], None] | None = None,
        *, again: bool = False,
    ) -> int:  # fmt: skip
        self._elsewhere("Embedding (`tracehouse index embeddings` on the gateway's machine)")

    def search_lag(self) -> int:
        self._elsewhere("Search (GET /v1/search)")


def _part(batch: ImportBatch, items: tuple[Any, ...], *, last: bool) -> ImportBatch:
    """Some of a batch's items with their rows; the batch-level cursors, rejects and clears
    only in the `last` part."""
    ids = {item.session_id for item in items}
    rows = {}
    for name in {*batch.rows, *batch.frames}:
        at = TABLES_BY_NAME[name].names.index("session_id")
        rows[name] = [r for r in batch.tuples(name) if r[at] in ids]
    return replace(
        batch,
        items=items,
        rows=rows,
        frames={},
        watermarks=batch.watermarks if last else (),
        rejects=batch.rejects if last else (),
        clears=batch.clears if last else (),
        idempotency_key=None,
        invalid=(),
        invalid_at=(),
    )
