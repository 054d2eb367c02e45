"""Typed errors. Each carries the exit code of DESIGN §7; the CLI turns them into one line."""

from __future__ import annotations


class TracehouseError(Exception):
    """Base of every error the user should see as a message, not a traceback."""

    exit_code = 2


class ConfigError(TracehouseError):
    """A setting has a bad value, or a config file cannot be read."""


class RequestError(TracehouseError):
    """An import request whose envelope cannot be read (not JSON, no items, unknown field)."""


class IdempotencyConflict(TracehouseError):
    """The same idempotency key arrived with a different request."""


class StoreError(TracehouseError):
    """The store cannot be opened or used (missing, newer schema, not a ledger)."""


class StoreLockedError(StoreError):
    """The store stayed locked by another writer past the retry budget."""

    exit_code = 1


class StoreUnavailableError(StoreError):
    """The store's server did not answer, past the retry budget."""

    exit_code = 1


class ValidationError(ValueError):
    """One field of one item is invalid; the message names the field."""
