"""Sizes and durations as people read them, for every command's output."""

from __future__ import annotations

from datetime import timedelta

DAY = 86400.0


def ago(seconds: float) -> str:
    """A duration as people say it: 40 s, 12 min, 5 h, 3 days."""
    seconds = max(0.0, seconds)
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    if seconds < 2 * DAY:
        return f"{seconds / 3600:.0f} h"
    return f"{seconds / DAY:.0f} days"


def size(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.0f} B"


def hours_minutes(span: timedelta) -> str:
    """A span of a 5-hour block as its reports show it: 3h07m (nothing below 0)."""
    minutes = max(int(span.total_seconds() // 60), 0)
    return f"{minutes // 60}h{minutes % 60:02d}m"
