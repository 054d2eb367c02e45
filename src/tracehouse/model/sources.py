"""Every source tracehouse reads, in one table: its provider name (what the ledger's
`source_provider` holds), the package under `parsers/` that reads it, and the prefix of its
sessions' labels (`cc-6a963594`).

Adding a source is its package (its roots, layout, watch rules and how each record maps to the
ledger, declared there) and one line here: the parser registry imports the package this names,
and everything that lists or checks providers (the import contract, the config, the options of
every command, the gateway's and the MCP server's filters) reads this table. It is a table in
`model/` because those readers sit below the parsers, which they may not import.
"""

from __future__ import annotations

# provider: (package under parsers/, label prefix); in the order every list shows them.
SOURCES: dict[str, tuple[str, str]] = {
    "claude-code": ("claude_code", "cc"),
    "codex": ("codex", "cx"),
    "cursor": ("cursor", "cu"),
    "gemini-cli": ("gemini_cli", "gm"),
    "opencode": ("opencode", "oc"),
    "cursor-agent": ("cursor_agent", "ca"),
    "copilot-cli": ("copilot_cli", "gh"),
    "aider": ("aider", "ai"),
    "qwen-code": ("qwen_code", "qw"),
    "crush": ("crush", "cr"),
    "pi": ("pi", "pi"),
    "kimi-cli": ("kimi_cli", "km"),
    "cline": ("cline", "cl"),
    "continue": ("continue_dev", "ct"),
    "openhands": ("openhands", "oh"),
    "zed": ("zed", "zd"),
    "roo-code": ("roo_code", "ro"),
    "kilo-code": ("kilo_code", "kl"),
    "goose": ("goose", "gs"),
    "droid": ("droid", "fd"),
    "warp": ("warp", "wp"),
}


# Sources whose ids begin with a clock, so that sessions started together share their heads:
# a label is cut from the end of what the pattern's group holds (the whole id without one).
CLOCK_FIRST: dict[str, str] = {
    "codex": r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",  # UUIDv7 threads
    "opencode": r"ses_(\w+)",  # `ses_<12 hex of an inverted clock><14 random base62>`
}


def label_prefix(provider: str) -> str:
    """The prefix of a provider's labels; a provider not (yet) in the table has its first two
    letters (a ledger written by a newer tracehouse)."""
    found = SOURCES.get(provider)
    return found[1] if found is not None else provider[:2]
