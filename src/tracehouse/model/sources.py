"""Every source tracehouse reads, in one table: its provider name (what the ledger's
`source_provider` holds), the package under `parsers/` that reads it, the prefix of its
sessions' labels (`cc-6a963594`) and, where its ids begin with a clock, their shape.

Adding a source is its package (its roots, layout, watch rules and how each record maps to the
ledger, declared there) and one line here: the parser registry imports the package this names,
and everything that lists or checks providers (the import contract, the config, the options of
every command, the gateway's and the MCP server's filters) reads this table. It is a table in
`model/` because those readers sit below the parsers, which they may not import.
"""

from __future__ import annotations

from typing import NamedTuple

# Ids that begin with a clock: sessions started together share their heads, so a label is cut
# from the end of what the pattern's group holds (the whole id without one).
UUID_V7 = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


class Source(NamedTuple):
    package: str  # under parsers/
    label: str  # the prefix of its sessions' labels
    clock_first: str | None = None  # the shape of ids that begin with a clock, if it has them


# In the order every list shows them.
SOURCES: dict[str, Source] = {
    "claude-code": Source("claude_code", "cc"),
    "codex": Source("codex", "cx", UUID_V7),  # threads are UUIDv7
    "cursor": Source("cursor", "cu"),
    "gemini-cli": Source("gemini_cli", "gm"),
    # `ses_<12 hex of an inverted clock><14 random base62>`
    "opencode": Source("opencode", "oc", r"ses_(\w+)"),
    "cursor-agent": Source("cursor_agent", "ca"),
    "copilot-cli": Source("copilot_cli", "gh"),
    "aider": Source("aider", "ai"),
    "qwen-code": Source("qwen_code", "qw"),
    "crush": Source("crush", "cr"),
    "pi": Source("pi", "pi"),
    "kimi-cli": Source("kimi_cli", "km"),
    "cline": Source("cline", "cl"),
    "continue": Source("continue_dev", "ct"),
    "openhands": Source("openhands", "oh"),
    "zed": Source("zed", "zd"),
    "roo-code": Source("roo_code", "ro"),
    "kilo-code": Source("kilo_code", "kl"),
    "goose": Source("goose", "gs"),
    "droid": Source("droid", "fd"),
    "warp": Source("warp", "wp"),
}


def label_prefix(provider: str) -> str:
    """The prefix of a provider's labels; a provider not (yet) in the table has its first two
    letters (a ledger written by a newer tracehouse)."""
    found = SOURCES.get(provider)
    return found.label if found is not None else provider[:2]


def clock_first(provider: str) -> str | None:
    """The shape of the provider's ids that begin with a clock, if it has any."""
    found = SOURCES.get(provider)
    return found.clock_first if found is not None else None
