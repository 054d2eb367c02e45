"""tracehouse: one durable ledger of every AI coding-agent session."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("tracehouse")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0"
