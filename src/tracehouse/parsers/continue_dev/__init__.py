"""Continue's chat sessions (`~/.continue/sessions`): see README.md. The package is not named
`continue`, a Python keyword; the source is."""

from tracehouse.parsers.continue_dev.session import (
    PROVIDER,
    default_roots,
    discover,
    parse,
    unit_for,
    watch_roots,
)

__all__ = ["PROVIDER", "default_roots", "discover", "parse", "unit_for", "watch_roots"]
