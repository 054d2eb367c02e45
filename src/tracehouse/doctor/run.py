"""Every check, in the order a person would fix things: the ledger, the sources, the machine."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tracehouse.doctor import ledger, sources
from tracehouse.doctor.findings import Finding, Host
from tracehouse.parsers.registry import PARSERS
from tracehouse.store.protocol import SessionStore


def diagnose(
    location: str,
    roots: dict[str, list[Path]],
    host: Host | None = None,
    embeddings: str = "none",
) -> list[Finding]:
    """Every finding; `embeddings`: the model the settings name for search by meaning."""
    host = host or Host()
    store, findings = ledger.open_ledger(location)
    units = {provider: PARSERS[provider].discover(paths) for provider, paths in roots.items()}
    times = {provider: sources.mtimes(found) for provider, found in units.items()}
    try:
        for provider, paths in roots.items():
            unit_list, unit_times = units[provider], times[provider]
            findings.append(sources.found(provider, paths, unit_list, unit_times, host))
            if store is not None and unit_list:
                findings.append(sources.imported(provider, unit_list, unit_times, store, host))
        if "claude-code" in roots:
            last = ledger.last_success(store) if store is not None else None
            findings.append(
                sources.retention(roots["claude-code"], times["claude-code"], last, host)
            )
        if store is not None:
            findings.append(guarded("rejects", ledger.rejects, store))
            findings.append(guarded("live lag", ledger.live_lag, store))
            findings.append(
                guarded("search by meaning", lambda s: ledger.vectors(s, embeddings), store)
            )
    finally:
        if store is not None:
            store.close()
    watched = [w for p, paths in roots.items() for w in PARSERS[p].watch_roots(paths)]
    findings.append(sources.inotify(watched, host))
    if "cursor" in roots:
        findings.append(sources.snapshot_room(units["cursor"], host))
    findings.append(sources.leftovers(host))
    if not any(units.values()):
        findings.append(
            Finding(
                "sources",
                "warn",
                "no agent logs found in any source",
                "point --home or --source at where Claude Code, Codex or Cursor keep them",
            )
        )
    return findings


def guarded(name: str, check: Callable[[SessionStore], Finding], store: SessionStore) -> Finding:
    """A check that reads columns a pending migration adds reports that, not a traceback."""
    try:
        return check(store)
    except Exception as exc:
        return Finding(name, "warn", f"cannot check: {exc}", "`tracehouse store migrate`")
