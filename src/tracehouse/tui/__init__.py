"""The terminal UI: `tracehouse browse`."""
