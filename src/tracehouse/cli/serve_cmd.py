"""`tracehouse serve`: the gateway, and `serve tokens` to manage who may use it."""

from __future__ import annotations

import sys
from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer

from tracehouse.cli.common import Context, command
from tracehouse.errors import ConfigError

app = typer.Typer(
    help="Run the gateway: sessions.import over HTTP and a web view of the ledger.",
    invoke_without_command=True,
)
tokens_app = typer.Typer(help="The bearer tokens the gateway accepts.", no_args_is_help=True)
app.add_typer(tokens_app, name="tokens")
sessions_app = typer.Typer(help="Which machine owns which sessions.", no_args_is_help=True)
app.add_typer(sessions_app, name="sessions")


@app.callback(invoke_without_command=True)
@command
def serve(
    ctx: Context,
    invoked: typer.Context,
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port to listen on.")] = 8765,
    certfile: Annotated[
        Path | None, typer.Option("--certfile", help="TLS certificate (PEM).", show_default=False)
    ] = None,
    keyfile: Annotated[
        Path | None, typer.Option("--keyfile", help="TLS private key (PEM).", show_default=False)
    ] = None,
    workers: Annotated[int, typer.Option("--workers", help="Gateway processes.")] = 1,
    connections: Annotated[
        int, typer.Option("--connections", help="Store connections per process.")
    ] = 4,
    max_request_mb: Annotated[
        int, typer.Option("--max-request-mb", help="Largest sessions.import request (MiB).")
    ] = 32,
    allow_unredacted: Annotated[
        bool,
        typer.Option(
            "--allow-unredacted",
            help="Store pushes a client sent unredacted (redact = false) as they are.",
        ),
    ] = False,
    forwarded_allow_ips: Annotated[
        str,
        typer.Option(
            "--forwarded-allow-ips",
            help="Proxies (addresses or networks, comma-separated) whose X-Forwarded-For names"
            " the client: sign-in failures count per real client behind them.",
        ),
    ] = "127.0.0.1",
) -> None:
    """Serve the ledger named by --store until SIGINT or SIGTERM. Every push is redacted on
    arrival (the config's `redact` settings, with this machine's key)."""
    if invoked.invoked_subcommand is not None:  # `serve tokens …`
        return
    from tracehouse.gateway.serve import ServeOptions, run

    if not 0 < port < 65536:
        raise ConfigError(f"--port {port}: expected 1–65535")
    if (certfile is None) != (keyfile is None):
        raise ConfigError("--certfile and --keyfile go together")
    for option, path in (("--certfile", certfile), ("--keyfile", keyfile)):
        if path is not None and not path.is_file():
            raise ConfigError(f"{option} {path}: no such file")
    for option, value, top in (("--workers", workers, 64), ("--connections", connections, 64),
                               ("--max-request-mb", max_request_mb, 1024)):  # fmt: skip
        if not 1 <= value <= top:
            raise ConfigError(f"{option} {value}: expected 1–{top}")
    _trusted_proxies(forwarded_allow_ips)
    if _password_in_arguments(sys.argv):
        ctx.err.print(
            "note: the --store DSN holds a password, which every local user sees in `ps`; put"
            " the DSN in the config file (store = …) or TRACEHOUSE_STORE, or the password in"
            " ~/.pgpass"
        )
    run(
        ServeOptions(
            store=ctx.settings.store,
            host=host,
            port=port,
            certfile=str(certfile) if certfile else None,
            keyfile=str(keyfile) if keyfile else None,
            workers=workers,
            connections=connections,
            max_request_bytes=max_request_mb * 2**20,
            redact=ctx.settings.redact,
            allow_unredacted=allow_unredacted,
            redact_key_file=ctx.settings.redact_key_file,
            redact_patterns=dict(ctx.settings.redact_patterns),
            redact_allow=ctx.settings.redact_allow,
            forwarded_allow_ips=forwarded_allow_ips,
            limits=[
                {k: v for k, v in asdict(limit).items() if v is not None}
                for limit in ctx.settings.limits
            ],
            embeddings=ctx.settings.embeddings,
        ),
        say=ctx.err.print,
    )


def _trusted_proxies(value: str) -> None:
    """`--forwarded-allow-ips`: `*`, or addresses and networks, each checked here."""
    import ipaddress

    for part in (p.strip() for p in value.split(",")):
        if part == "*":
            continue
        try:
            ipaddress.ip_network(part, strict=False)
        except ValueError:
            raise ConfigError(
                f"--forwarded-allow-ips {part!r}: give addresses or networks (10.0.0.0/8), or *"
            ) from None


def _password_in_arguments(argv: list[str]) -> bool:
    from urllib.parse import urlsplit

    for arg in argv:
        value = arg.partition("=")[2] if arg.startswith("--store=") else arg
        if value.startswith(("postgresql://", "postgres://")):
            try:
                if urlsplit(value).password:
                    return True
            except ValueError:
                continue
    return False


@tokens_app.command("add")
@command
def tokens_add(
    ctx: Context,
    name: Annotated[str, typer.Argument(help="Who or what it is for (a laptop, a person).")],
    scope: Annotated[
        str, typer.Option("--scope", help="push (sync), read (API, web view) or admin.")
    ],
    machine: Annotated[
        str | None,
        typer.Option(
            "--machine", help="A push token's machine, the only one it writes as (default: NAME)."
        ),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="Write the token to this new file (mode 0600).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Make a token; it is printed once (or written to --output), and only its hash is kept."""
    from tracehouse.gateway.tokens import add_token, write_token_file

    if output is not None and output.exists():
        raise ConfigError(f"--output {output}: exists already; tokens are never overwritten")
    ledger = ctx.store()
    try:
        token = add_token(ledger, name, scope, machine)
    finally:
        ledger.close()
    if output is not None:
        write_token_file(output, token)
    if ctx.json:
        bound = machine or name if scope == "push" else None
        shown = None if output is not None else token
        ctx.print_json({"name": name, "scope": scope, "machine": bound, "token": shown})
        return
    if output is not None:
        ctx.err.print(f"token {name!r} ({scope}) written to {output} (mode 0600)")
        return
    print(token)
    ctx.err.print(f"token {name!r} ({scope}): shown once; keep it in a file only you can read")


@tokens_app.command("list")
@command
def tokens_list(ctx: Context) -> None:
    """The tokens by name, scope and last use (never the tokens themselves)."""
    from tracehouse.gateway.tokens import list_tokens

    rows = ctx.read(list_tokens)
    if ctx.json:
        ctx.print_json(rows)
        return
    for row in rows:
        used = row["last_used_at"] or "never used"
        if row["machine"]:
            machine = f"as {row['machine']}"
        else:
            machine = "unbound" if row["scope"] == "push" else "-"
        ctx.out.print(
            f"{row['name']:<24} {row['scope']:<5} {machine:<20} made {row['created_at']} · {used}"
        )
    if not rows:
        ctx.err.print("no tokens: tracehouse serve tokens add NAME --scope push|read")


@tokens_app.command("revoke")
@command
def tokens_revoke(
    ctx: Context, name: Annotated[str, typer.Argument(help="The token's name.")]
) -> None:
    """Remove a token: requests carrying it are refused from now on."""
    from tracehouse.gateway.tokens import revoke_token

    ledger = ctx.store()
    try:
        removed = revoke_token(ledger, name)
    finally:
        ledger.close()
    if not removed:
        raise ConfigError(f"no token named {name!r} (tracehouse serve tokens list)")
    ctx.err.print(f"token {name!r} revoked")


@sessions_app.command("move")
@command
def sessions_move(
    ctx: Context,
    source: Annotated[str, typer.Option("--from", help="The machine that owns them now.")],
    target: Annotated[str, typer.Option("--to", help="The machine that will own them.")],
) -> None:
    """Give every session of one machine, and its cursors, to another (a laptop replaced)."""
    from tracehouse.config import MACHINE
    from tracehouse.gateway.ownership import move_sessions

    for flag, name in (("--from", source), ("--to", target)):
        if not MACHINE.fullmatch(name):
            raise ConfigError(f"{flag} {name!r}: 1–64 letters, digits, '.', '_' or '-'")
    ledger = ctx.store()
    try:
        moved = move_sessions(ledger, source, target)
    finally:
        ledger.close()
    if ctx.json:
        ctx.print_json({"from": source, "to": target, "moved": moved})
        return
    ctx.err.print(f"{moved:,} session(s) of {source} now belong to {target}")
