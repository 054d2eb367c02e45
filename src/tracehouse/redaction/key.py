"""The key that makes a marker's hash: per machine, made once, never leaves the machine.

With the key, the same secret maps to the same marker on this machine (search and dedupe work);
without it, a marker's hash cannot be checked against guessed secrets. A gateway has its own, for
what it redacts of pushes that arrive unredacted.
"""

from __future__ import annotations

import os
import secrets
import tempfile
from pathlib import Path

from tracehouse.config import default_store_path
from tracehouse.errors import ConfigError

KEY_BYTES = 32


def default_key_path() -> Path:
    """In the data directory, beside the default ledger."""
    return default_store_path().parent / "redaction.key"


def load_key(path: Path) -> bytes:
    """The key in `path`, made there (0600, in a 0700 directory) if there is none yet."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return _make(path)
    except OSError as exc:
        raise ConfigError(f"redaction key {path} cannot be read: {exc.strerror or exc}") from None
    if len(data) < KEY_BYTES:
        raise ConfigError(
            f"redaction key {path} holds {len(data)} bytes, fewer than {KEY_BYTES}: "
            "remove it to have a new one made (markers already stored keep their old hashes)"
        )
    return data


def _make(path: Path) -> bytes:
    """Written whole to a private temporary file, then linked into place: a second process
    making one at the same moment finds the first one's complete key, never half of it."""
    key = secrets.token_bytes(KEY_BYTES)
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".redaction-key-")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(key)
                out.flush()
                os.fsync(out.fileno())
            os.link(temporary, path)
        finally:
            os.unlink(temporary)
    except FileExistsError:
        return load_key(path)
    except OSError as exc:
        raise ConfigError(f"redaction key {path} cannot be made: {exc.strerror or exc}") from None
    return key
