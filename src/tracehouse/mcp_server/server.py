"""The MCP server: the tools of `tools.py`, described for a model, over any ledger.

The tools' signatures and descriptions are declared once, here; what answers a call is a
`Dispatch`: over a local ledger (`tracehouse mcp` on stdio, one store held open and used by one
call at a time; the gateway's `/mcp`, a store from its pool per call) it runs the tool's
function on a worker thread, as a store's queries block; over a gateway it forwards the call to
the gateway's `/mcp` (`bridge.py`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Annotated, Any, Protocol, TypeVar

import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from tracehouse import __version__
from tracehouse.errors import TracehouseError
from tracehouse.mcp_server import tools
from tracehouse.model.tables import PROVIDERS
from tracehouse.reports.usage import PERIODS
from tracehouse.search.hits import KINDS
from tracehouse.shown import escaped
from tracehouse.store.protocol import SessionStore
from tracehouse.store.reads import SessionNotFound

if TYPE_CHECKING:
    from contextlib import AbstractAsyncContextManager

    from tracehouse.reports.pricing import PriceTable
    from tracehouse.search.embedders import Lazy

T = TypeVar("T")
Dispatch = Callable[[str, dict[str, Any]], Awaitable[str]]

INSTRUCTIONS = (
    "tracehouse keeps one ledger of the user's past AI coding-agent sessions (Claude Code,"
    " Codex, Cursor, Gemini CLI, OpenCode and more): every prompt, answer, tool call and result."
    " Use it to recall what was decided, how a problem was solved before, or which session"
    " changed a file: `search` first, then `read_session` on a hit. Times are UTC."
)


class Ledger(Protocol):
    """Where the tools' store comes from: `work` runs with a store and its answer returned."""

    async def run(self, work: Callable[[SessionStore], T]) -> T: ...


class OneStore:
    """One store for the server's life, used by one call at a time (stdio)."""

    def __init__(self, store: SessionStore) -> None:
        self.store = store
        self._lock = threading.Lock()

    async def run(self, work: Callable[[SessionStore], T]) -> T:
        def locked() -> T:
            with self._lock:
                return work(self.store)

        return await anyio.to_thread.run_sync(locked)


def local_dispatch(
    ledger: Ledger,
    prices: Callable[[], PriceTable] | None = None,
    embeddings: Lazy | None = None,
) -> Dispatch:
    """Calls answered from `ledger`. `prices` makes the usage report's price table, loaded on
    the first `usage` call (the dataset takes a while to read); `embeddings`, the model that
    searches by meaning, on the first search that does."""
    price_table: list[PriceTable] = []

    def priced(store: SessionStore, **args: Any) -> str:
        if not price_table:
            from tracehouse.reports.pricing import load_prices

            price_table.append(prices() if prices else load_prices())
        return tools.usage_report(store, price_table[0], **args)

    def search(store: SessionStore, **args: Any) -> str:
        return tools.search(store, embeddings=embeddings, **args)

    functions: dict[str, Callable[..., str]] = {
        "search": search,
        "list_sessions": tools.list_sessions,
        "read_session": tools.read,
        "files_touched": tools.touched,
        "usage": priced,
    }

    async def dispatch(name: str, args: dict[str, Any]) -> str:
        given = {k: v for k, v in args.items() if v is not None}  # None: the default
        # What a ledger holds reaches a model as text to read: its control characters and
        # bidirectional overrides escaped, as on every other surface (DESIGN §9).
        try:
            return escaped(await ledger.run(lambda store: functions[name](store, **given)))
        except SessionNotFound as exc:  # said to a model: which tool to call next
            raise ToolError(escaped(exc.for_agent)) from None
        except TracehouseError as exc:  # a wrong argument or an unknown label: the model's to fix
            raise ToolError(escaped(str(exc))) from None

    return dispatch


Providers = Annotated[
    list[str] | None,
    Field(description=f"Only these agents: {', '.join(PROVIDERS)}."),
]
Project = Annotated[
    str | None, Field(description="A workspace path or project name, matched as a prefix.")
]
Since = Annotated[
    str | None,
    Field(description="From this UTC date or time (2026-05-01, 2026-05-01T14:00) or a duration"
                      " back from now (7d, 12h)."),
]  # fmt: skip
Until = Annotated[str | None, Field(description="Before this UTC date or time, or a duration.")]
Limit = Annotated[int, Field(description="How many to return (a page).")]
Offset = Annotated[int, Field(description="How many to skip: the next page's offset.")]
READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False, idempotent_hint=True)


def build_server(
    dispatch: Dispatch,
    lifespan: Callable[[MCPServer], AbstractAsyncContextManager[Any]] | None = None,
) -> MCPServer:
    """The server with its five tools, each call answered by `dispatch`."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    server: MCPServer = MCPServer(
        "tracehouse",
        instructions=INSTRUCTIONS,
        version=__version__,
        log_level="WARNING",
        lifespan=lifespan,
    )
    # The SDK configures the root logger when it makes a server (a Rich handler on stderr);
    # the process that embeds it (the gateway, the CLI) keeps the logging it had.
    root.handlers[:] = handlers
    root.setLevel(level)

    def tool(fn: Callable[..., Awaitable[str]]) -> Callable[..., Awaitable[str]]:
        # The docstring, as one paragraph: its line breaks are the source's, not the model's.
        description = " ".join((fn.__doc__ or "").split())
        server.add_tool(fn, description=description, annotations=READ_ONLY, structured_output=False)
        return fn

    @tool
    async def search(
        query: Annotated[str, Field(description='Words that must all appear; "a phrase";'
                                    " -word excludes; a OR b; migrat* is a prefix. Paths and"
                                    " identifiers match as written.")],
        providers: Providers = None,
        project: Project = None,
        session: Annotated[str | None, Field(description="Only this session (a label from"
                                             " another result) and its subagents.")] = None,
        types: Annotated[list[str] | None, Field(description="Only these kinds of text: "
                                                 + ", ".join(KINDS) + ".")] = None,
        tool: Annotated[str | None, Field(description="Only calls of this tool (Bash, shell,"
                                          " apply_patch, …).")] = None,
        since: Since = None,
        until: Until = None,
        limit: Limit = 10,
        mode: Annotated[str | None, Field(description="lexical: the words must all appear"
                                          " (exact names, errors, paths); semantic: by meaning,"
                                          " for a question in other words or another language;"
                                          " hybrid: both. Default: hybrid where the ledger has"
                                          " vectors, else lexical.")] = None,
    ) -> str:  # fmt: skip
        """Search over every past agent session: prompts, answers, thinking, tool calls with
        their results, and titles. Use it to find where something was discussed, decided, run
        or fixed. Returns ranked hits, each with its session label, agent, project, time, a
        snippet with the matched words in bold, and the read_session call that opens the
        session at that hit."""
        return await dispatch("search", dict(
            query=query, providers=providers, project=project, session=session, types=types,
            tool=tool, since=since, until=until, limit=limit, mode=mode,
        ))  # fmt: skip

    @tool
    async def list_sessions(
        providers: Providers = None,
        project: Project = None,
        models: Annotated[list[str] | None, Field(description="Only sessions of these models"
                                                  " (a name or its beginning).")] = None,
        since: Since = None,
        until: Until = None,
        subagents: Annotated[bool, Field(description="Include subagent sessions.")] = False,
        limit: Limit = 20,
        offset: Offset = 0,
    ) -> str:  # fmt: skip
        """The sessions in the ledger, most recently active first, a page at a time: label,
        agent, last activity, project, message count, tokens and title. Use it to see what was
        worked on recently or in a project; read one with read_session."""
        return await dispatch("list_sessions", dict(
            providers=providers, project=project, models=models, since=since, until=until,
            subagents=subagents, limit=limit, offset=offset,
        ))  # fmt: skip

    @tool
    async def read_session(
        session: Annotated[str, Field(description="The session's label (e.g. cc-6a963594) or"
                                      " id, as search and list_sessions give it.")],
        around: Annotated[str | None, Field(description="Open at this message or tool call id"
                                            " (a search hit's `around`).")] = None,
        start: Annotated[int | None, Field(description="Start at this entry number (a previous"
                                           " page's `start=` for the next page).")] = None,
        budget: Annotated[int, Field(description="Most tokens of text to return (500–100000);"
                                     " the rest comes on later pages.")] = 8000,
        result_chars: Annotated[int, Field(description="Characters of each tool result to"
                                           " show; longer ones are cut and say so.")] = 1500,
        since: Annotated[str | None, Field(description="Only the messages from this UTC time"
                                           " (2026-05-01T14:00) or a duration back (30m, 2h):"
                                           " what came in since you last read it.")] = None,
    ) -> str:  # fmt: skip
        """One session in order, a page at a time: each message with its role, model and time,
        the tool calls it made with their parameters and results, and its subagents as links.
        Every page ends with the call for the next one. Use `around` to open at a search hit,
        `start` to page on, `since` for what is new, `result_chars` to see a long tool result
        whole."""
        return await dispatch("read_session", dict(
            session=session, around=around, start=start, budget=budget, result_chars=result_chars,
            since=since,
        ))  # fmt: skip

    @tool
    async def files_touched(
        path: Annotated[str, Field(description="A file or folder: absolute, relative to a"
                                   " project, or its last parts (billing/webhooks.py).")],
        providers: Providers = None,
        project: Project = None,
        since: Since = None,
        until: Until = None,
        limit: Limit = 20,
        offset: Offset = 0,
    ) -> str:  # fmt: skip
        """The sessions and tool calls that read, edited, created, deleted or ran a command on a
        path, newest first, grouped by session. Use it to find who changed a file and why;
        each call comes with the read_session call that opens the session there."""
        return await dispatch("files_touched", dict(
            path=path, providers=providers, project=project, since=since, until=until,
            limit=limit, offset=offset,
        ))  # fmt: skip

    @tool
    async def usage(
        by: Annotated[str, Field(description=f"Rows per {', '.join(PERIODS)}.")] = "daily",
        providers: Providers = None,
        project: Project = None,
        models: Annotated[list[str] | None, Field(description="Only these models (a name or"
                                                  " its beginning).")] = None,
        since: Since = None,
        until: Until = None,
    ) -> str:  # fmt: skip
        """Tokens (input, output, cache read and write, reasoning) and their cost at API list
        prices, by day, week, month, session, project, model or machine, with the filters.
        Models with no known price are listed with their tokens, never guessed."""
        return await dispatch("usage", dict(
            by=by, providers=providers, project=project, models=models, since=since, until=until,
        ))  # fmt: skip

    return server


def call_once(server: MCPServer, tool: str, args: dict[str, Any]) -> tuple[bool, str]:
    """(is_error, text) of one call through `server`'s protocol, in this process: what an
    agent would be answered, for trying a tool from the command line."""
    from mcp import Client

    async def run() -> tuple[bool, str]:
        async with Client(server) as client:
            known = {t.name for t in (await client.list_tools()).tools}
            if tool not in known:
                return True, f"--call {tool!r}: one of {', '.join(sorted(known))}"
            result = await client.call_tool(tool, args)
            return bool(result.is_error), "".join(getattr(c, "text", "") for c in result.content)

    return anyio.run(run)
