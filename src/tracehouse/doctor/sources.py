"""Checks of the sources and the machine: found, imported, Claude Code's retention, inotify
watches, room for a Cursor snapshot, leftover scratch copies."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path

import orjson

from tracehouse.doctor.findings import Finding, Host
from tracehouse.humanize import DAY, ago, size
from tracehouse.parsers.base import Unit
from tracehouse.pipeline.sync import plan
from tracehouse.state import scratch
from tracehouse.store.protocol import SessionStore

CLEANUP_DEFAULT_DAYS = 30  # Claude Code's default `cleanupPeriodDays`
STALE_CHANGE = 3600.0  # a change this old that is still not imported: nothing is syncing
WATCH_SHARE = 0.5  # the watch limit is per user, shared with editors: warn past half of it


def mtimes(units: list[Unit]) -> dict[str, float]:
    """Each unit's last change, stat'ed once for all the checks (a vanished file is left out)."""
    out = {}
    for unit in units:
        try:
            out[unit.key] = os.stat(unit.key).st_mtime
        except OSError:
            continue
    return out


def found(
    provider: str, roots: list[Path], units: list[Unit], times: dict[str, float], host: Host
) -> Finding:
    where = ", ".join(str(r) for r in roots if r.exists()) or ", ".join(str(r) for r in roots)
    if not units:
        others = f" and {len(roots) - 1} other places" if len(roots) > 1 else ""
        return Finding(f"{provider} source", "ok", f"absent (looked in {roots[0]}{others})")
    newest = f", last change {ago(host.now - max(times.values()))} ago" if times else ""
    files = f"{len(units):,} file{'s' if len(units) != 1 else ''}"
    return Finding(f"{provider} source", "ok", f"{files} in {where}{newest}")


def imported(
    provider: str, units: list[Unit], times: dict[str, float], store: SessionStore, host: Host
) -> Finding:
    """Is every file the ledger could hold in it, as of its last change?"""
    name = f"{provider} imported"
    if not units:
        return Finding(name, "ok", "nothing to import")
    cursors = store.watermarks(provider)
    waiting = [u for u, _, todo in plan(units, cursors, False) if todo]
    if not waiting:
        return Finding(name, "ok", f"all {len(units):,} files are in the ledger as they are now")
    changed = [times[u.key] for u in waiting if u.key in times]
    oldest = host.now - min(changed) if changed else 0.0
    new = sum(u.key not in cursors for u in waiting)
    detail = (
        f"{len(waiting):,} of {len(units):,} files not in the ledger as they are now"
        f" ({new:,} never imported, {len(waiting) - new:,} changed since)"
    )
    if oldest < STALE_CHANGE:
        return Finding(name, "ok", f"{detail}, within {ago(oldest)}: the next sync reads them")
    return Finding(
        name,
        "warn",
        f"{detail}, the oldest {ago(oldest)} ago",
        "run `tracehouse sync backfill`, and schedule it (docs/runbooks/backfill-cron.md)",
    )


def cleanup_period(root: Path) -> tuple[int, str | None]:
    """Claude Code's `cleanupPeriodDays` from `<root>/settings.json`, and a problem reading it."""
    settings = root / "settings.json"
    try:
        data = orjson.loads(settings.read_bytes())
    except FileNotFoundError:
        return CLEANUP_DEFAULT_DAYS, None
    except (OSError, orjson.JSONDecodeError) as exc:
        return CLEANUP_DEFAULT_DAYS, f"{settings}: cannot read ({exc})"
    value = data.get("cleanupPeriodDays") if isinstance(data, dict) else None
    if value is None:
        return CLEANUP_DEFAULT_DAYS, None
    if isinstance(value, bool) or not isinstance(value, int):
        return CLEANUP_DEFAULT_DAYS, f"{settings}: cleanupPeriodDays {value!r} is not a number"
    return value, None


def retention(
    roots: list[Path], times: dict[str, float], last_success: str | None, host: Host
) -> Finding:
    """Claude Code deletes transcripts `cleanupPeriodDays` after their last activity: the ledger
    must be synced more often than that, or sessions are lost before they are read."""
    name = "claude-code retention"
    periods = [cleanup_period(r) for r in roots if r.is_dir()]
    problems = [p for _, p in periods if p]
    days = min((d for d, _ in periods), default=CLEANUP_DEFAULT_DAYS)
    oldest = f"; oldest transcript {ago(host.now - min(times.values()))} old" if times else ""
    if problems:
        return Finding(name, "warn", problems[0], "fix the value in settings.json")
    if days <= 0:
        return Finding(
            name,
            "warn",
            f"cleanupPeriodDays is {days}: Claude Code keeps no transcripts",
            "raise cleanupPeriodDays, or run `tracehouse sync live` so sessions are read at once",
        )
    since = _age(last_success, host.now)
    kept = f"Claude Code deletes transcripts after {days} days{oldest}"
    if since is None and not times:
        return Finding(name, "ok", f"{kept}; no transcripts here yet")
    if since is None:
        return Finding(
            name,
            "fail",
            f"{kept}; no successful import yet",
            "run `tracehouse sync backfill` now and schedule it daily"
            " (docs/runbooks/backfill-cron.md)",
        )
    detail = f"{kept}; last successful import {ago(since)} ago"
    if since > days * DAY:
        return Finding(
            name,
            "fail",
            detail,
            "sessions older than that may be gone: run `tracehouse sync backfill` and schedule"
            " it daily (docs/runbooks/backfill-cron.md)",
        )
    if since > days * DAY / 2:
        return Finding(name, "warn", detail, "schedule `tracehouse sync backfill` daily")
    return Finding(name, "ok", detail)


def inotify(watched: Iterable[Path], host: Host) -> Finding:
    name = "inotify watches"
    if host.inotify_watches_file is None or not os.path.exists(host.inotify_watches_file):
        return Finding(name, "ok", "no per-user watch limit here")
    try:
        limit = int(Path(host.inotify_watches_file).read_text().strip())
    except (OSError, ValueError) as exc:
        return Finding(name, "warn", f"{host.inotify_watches_file}: cannot read ({exc})")
    needed = sum(1 for root in watched if root.is_dir() for _ in os.walk(root))
    detail = f"`sync live` needs {needed:,} of the {limit:,} allowed (fs.inotify.max_user_watches)"
    fix = (
        f"sudo sysctl fs.inotify.max_user_watches={max(524288, needed * 4)}"
        " (and in /etc/sysctl.d/ to keep it), or `sync live --poll`"
    )
    if needed > limit:
        return Finding(name, "fail", detail, fix)
    if needed > limit * WATCH_SHARE:
        return Finding(name, "warn", detail + "; editors share the same limit", fix)
    return Finding(name, "ok", detail)


def snapshot_room(units: list[Unit], host: Host) -> Finding:
    """A Cursor database in WAL mode is copied into TMPDIR to be read: it must fit."""
    name = "room for a Cursor snapshot"
    sizes = [
        sum(os.path.getsize(u.key + s) for s in ("", "-wal") if os.path.exists(u.key + s))
        for u in units
    ]
    if not sizes:
        return Finding(name, "ok", "no Cursor database to copy")
    try:
        free = shutil.disk_usage(host.tmp).free
    except OSError as exc:
        return Finding(name, "fail", f"{host.tmp}: {exc.strerror}", "set TMPDIR to a folder")
    need = max(sizes)
    detail = f"largest database {size(need)}, {size(free)} free in {host.tmp}"
    fix = "free space there, or point TMPDIR at a folder with more room"
    if free < need:
        return Finding(name, "fail", detail, fix)
    if free < 2 * need:
        return Finding(name, "warn", detail, fix)
    return Finding(name, "ok", detail)


def leftovers(host: Host) -> Finding:
    left = scratch.leftovers(host.tmp)
    if not left:
        return Finding("scratch copies", "ok", f"none left behind in {host.tmp}")
    return Finding(
        "scratch copies",
        "warn",
        f"{len(left)} left by runs that were killed, e.g. {left[0]}",
        "the next `tracehouse sync` removes them",
    )


def _age(iso: str | None, now: float) -> float | None:
    if not iso:
        return None
    try:
        return now - datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None
