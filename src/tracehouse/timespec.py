"""`--since` / `--until` values: a date or a time in the local time zone, or a duration back from
now (`90m`, `12h`, `7d`, `2w`), turned into the UTC ISO form the ledger stores its times in."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from tracehouse.errors import ConfigError

_DURATION = re.compile(r"^(\d+)\s*(m|min|h|d|w)$")
_UNITS = {"m": "minutes", "min": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def to_utc_iso(value: str, *, option: str, now: datetime | None = None, utc: bool = False) -> str:
    """`value` as 'YYYY-MM-DDTHH:MM:SS.mmmZ' (UTC); a bad value is a ConfigError naming the
    option. A date or time without a zone is local time (UTC with `utc`)."""
    text = value.strip()
    found = _DURATION.match(text)
    if found:
        amount = int(found.group(1))
        moment = (now or datetime.now(UTC)) - timedelta(**{_UNITS[found.group(2)]: amount})
    else:
        try:
            moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            raise ConfigError(
                f"{option} {value!r}: give a date (2026-01-31), a time (2026-01-31T14:00)"
                " or a duration back from now (90m, 12h, 7d, 2w)"
            ) from None
        if moment.tzinfo is None:  # local time, as people read their clocks
            moment = moment.replace(tzinfo=UTC) if utc else moment.astimezone()
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def local_time(iso: str | None, *, utc: bool = False) -> str:
    """A stored UTC time as local 'YYYY-MM-DD HH:MM' (UTC with `utc`), for people; '' when
    unknown."""
    moment = parse_stored(iso, utc=utc)
    if moment is None:
        return (iso or "")[:16]
    return moment.strftime("%Y-%m-%d %H:%M")


def parse_stored(iso: str | None, *, utc: bool = False) -> datetime | None:
    """A stored time in the local zone (UTC with `utc`); None when absent or unreadable."""
    if not iso:
        return None
    try:
        moment = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC if utc else None)
