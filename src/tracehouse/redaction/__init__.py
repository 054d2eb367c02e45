"""Redaction: secrets replaced by typed markers before anything is fingerprinted or stored.

`detect.py` finds them (a maintained library's rules, ours, the user's), `redactor.py` replaces
them, `rows.py` says which columns are free text, `key.py` keeps the markers' key, `ledger.py`
scans and rewrites a ledger stored before.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import TYPE_CHECKING

from tracehouse.errors import ConfigError

if TYPE_CHECKING:
    from tracehouse.config import Settings
    from tracehouse.redaction.redactor import Redactor


def redactor_for(settings: Settings, *, force: bool = False) -> Redactor | None:
    """The redactor the settings ask for; None when `redact = false` (unless `force`)."""
    if not settings.redact and not force:
        return None
    if importlib.util.find_spec("kingfisher_sdk") is None:  # said once, not as a reject a file
        raise ConfigError(
            "redaction needs the kingfisher-secret-scanner package, which is not installed"
            " (`uv sync` installs it); or set redact = false to store secrets verbatim"
        )
    from tracehouse.redaction.detect import Detector
    from tracehouse.redaction.key import default_key_path, load_key
    from tracehouse.redaction.redactor import Redactor

    path = (
        Path(settings.redact_key_file).expanduser()
        if settings.redact_key_file
        else default_key_path()
    )
    detector = Detector(settings.redact_patterns, frozenset(settings.redact_allow))
    return Redactor(load_key(path), detector)
