"""tracehouse: one durable ledger of every AI coding-agent session."""

# A literal, not importlib.metadata: reading package metadata costs ~75 ms at every start.
__version__ = "0.1.0"
