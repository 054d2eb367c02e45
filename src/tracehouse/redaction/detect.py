"""Finding secrets in text: the detection library's rules, tracehouse's own, and the user's.

The library is kingfisher (`kingfisher_sdk`): hundreds of maintained, provider-specific rules
(its own and the betterleaks catalog: cloud keys, GitHub/GitLab/Slack/Stripe/OpenAI/Anthropic/
Google tokens, JWTs, private keys, credentials in URLs) compiled into one vectorscan database,
checksums and entropy checked, base64 decoded. It was chosen over detect-secrets and betterleaks on
recall, false positives and speed measured on planted secrets and the real logs (`bench/
secrets_bench.py`). `rules.yml` beside this file adds assignments (`password=`, `api_key:`) in
the library's rule format; the user's own patterns are Python regular expressions.

Scanning one buffer is fast and a call is not (about 8 µs each), so callers hand over many texts
at once: `Detector.scan` takes one buffer of texts joined by `SEPARATOR`.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import platformdirs

from tracehouse.config import APP
from tracehouse.redaction import near

if TYPE_CHECKING:
    from kingfisher_sdk import Scanner

# Between two texts in one buffer: no rule's pattern spans it (they stop at a NUL or a blank line).
SEPARATOR = b"\n\n\x00\x00\n\n"
MARKER = re.compile(rb"\[REDACTED:([a-z0-9._-]+):[0-9a-f]{8}\]")
GENERIC = "assigned-secret"  # rules.yml's kind: a value after `password=` and the like
_PREFIXES = ("betterleaks.", "kingfisher.", "veles.secrets/", "tracehouse.", "custom.")


@dataclass(frozen=True)
class Finding:
    start: int  # byte offsets in the scanned buffer
    end: int
    kind: str
    secret: str  # the secret itself (decoded, for one found inside base64)


def kind_of(rule_id: str) -> str:
    """A marker's kind from a rule id: `betterleaks.github-pat` → `github-pat`."""
    for prefix in _PREFIXES:
        if rule_id.startswith(prefix):
            rule_id = rule_id[len(prefix) :]
            break
    rule_id = re.sub(r"\.\d+$", "", rule_id)
    return re.sub(r"[^a-z0-9._-]+", "-", rule_id.lower()).strip("-") or "secret"


def compile_patterns(patterns: Mapping[str, str]) -> tuple[tuple[str, re.Pattern[bytes]], ...]:
    """The user's patterns (kind → regular expression), checked where they enter: a bad one is
    a ValueError naming it. With a group, the group is the secret; without, the whole match."""
    out = []
    for kind, pattern in patterns.items():
        name = kind_of(kind)
        try:
            out.append((name, re.compile(pattern.encode("utf-8"))))
        except re.error as exc:
            raise ValueError(f"pattern {kind!r} is not a regular expression: {exc}") from None
    return tuple(out)


class Detector:
    """One process's scanner: built on first use (compiling the rules takes seconds the first
    time on a machine and a quarter second from the library's cache after), never pickled, so a
    detector travels to worker processes as its settings."""

    def __init__(
        self,
        patterns: Mapping[str, str] | None = None,
        allow: frozenset[str] = frozenset(),
        cache_dir: str | None = None,
    ) -> None:
        self.patterns = dict(patterns or {})
        self._compiled = compile_patterns(self.patterns)
        self.allow = allow
        self.cache_dir = cache_dir or default_cache_dir()
        self._scanner: Scanner | None = None
        self._loading: threading.Thread | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_scanner": None, "_compiled": (), "_loading": None}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._compiled = compile_patterns(self.patterns)

    def _load(self) -> Scanner:
        self.settle()
        if self._scanner is None:
            self._scanner = _scanner(self.cache_dir)
        return self._scanner

    def warm(self) -> None:
        """Compile (or load) the rules now, before a run's clock matters."""
        self._load()

    def load_in_background(self) -> None:
        """Start loading the rules on a thread of their own, for a caller with other work to do
        before its first scan (the library reads them in native code, without the GIL: 0.2 s
        from its cache), unless `prefetch` started it already. The first scan, `warm` or
        `settle` waits for the thread."""
        if self._scanner is None and self._loading is None:
            self._loading = _PREFETCHED.get(self.cache_dir)
            if self._loading is None:
                self._loading = threading.Thread(
                    target=_load_quietly, args=(self.cache_dir,), name="secret-rules"
                )
                self._loading.start()

    def settle(self) -> None:
        """Wait for a load started in the background (here, or by `prefetch` for these rules),
        if one is under way: a process forks only once no other thread runs."""
        for thread in (self._loading, _PREFETCHED.pop(self.cache_dir, None)):
            if thread is not None:
                _join(thread)
        self._loading = None

    def scan(self, data: bytes) -> list[Finding]:
        """Every secret in `data`, by byte offsets; none inside a redaction marker already there
        (a marker is never redacted again) and none the user allowed."""
        found: list[Finding] = []
        for f in self._load().scan(data):
            if not f.visible:  # a component of a composite rule (a host beside a key) is no secret
                continue
            start, end = f.location["start_offset"], f.location["end_offset"]
            if f.rule_id == near.WORD_RULE:  # a word that names a secret: its value, if any
                found.extend(_named(data, start, end, str(f.secret), f.is_base64_encoded))
            else:
                found.append(Finding(start, end, kind_of(f.rule_id), f.secret))
        for kind, pattern in self._compiled:
            for m in pattern.finditer(data):
                group = 1 if pattern.groups else 0
                start, end = m.span(group)
                if end > start:
                    secret = data[start:end].decode("utf-8", "replace")
                    found.append(Finding(start, end, kind, secret))
        if not found:
            return found
        markers = [m.span() for m in MARKER.finditer(data)]
        return [f for f in found if f.secret not in self.allow and not _inside(f, markers)]


def default_cache_dir() -> str:
    return str(Path(platformdirs.user_cache_dir(APP)) / "rules")


# Loads `prefetch` started, by cache directory: the process's, as `_scanner`'s cache is.
_PREFETCHED: dict[str, threading.Thread] = {}


def prefetch(cache_dir: str | None = None) -> None:
    """Start loading the rules now, on a daemon thread, for a command that is likely to scan:
    `tracehouse sync`, from the command line's first step, before the command's own imports
    and its plan, which the load (a quarter second) then runs beside. A sync of ten appended
    lines waited 0.23 s for the rules after its plan when the load began with the plan. A run
    with nothing to read exits without waiting for it; a Detector of these rules waits for it
    at its first scan, `warm` or `settle`.

    Only rules already compiled into the cache are loaded so: compiling them (seconds, once a
    machine) is left to a run that scans, and a machine with redaction off, which never
    compiled them, loads nothing and never waits for a load before forking its parsers."""
    directory = cache_dir or default_cache_dir()
    if directory not in _PREFETCHED and _compiled_in(directory):
        thread = threading.Thread(
            target=_load_quietly, args=(directory,), name="secret-rules", daemon=True
        )
        _PREFETCHED[directory] = thread
        thread.start()


def _compiled_in(directory: str) -> bool:
    try:
        with os.scandir(directory) as entries:
            return any(entry.is_file() for entry in entries)
    except OSError:
        return False


def settle_prefetched() -> None:
    """Wait for every load `prefetch` started (a process about to fork, whether it scans or
    not)."""
    while _PREFETCHED:
        _join(_PREFETCHED.popitem()[1])


def _load_quietly(cache_dir: str) -> None:
    with contextlib.suppress(Exception):  # raised again, with its message, at the first scan
        _scanner(cache_dir)


def _join(thread: threading.Thread) -> None:
    task = f"/proc/self/task/{thread.native_id}"
    thread.join()
    # The kernel lists a joined thread for a moment more (1 join in 200 here), and a parser is
    # forked only where it lists none: wait for it to go, briefly.
    deadline = time.monotonic() + 0.1
    while os.path.exists(task) and time.monotonic() < deadline:
        time.sleep(0.001)


@functools.lru_cache(maxsize=4)
def _scanner(cache_dir: str) -> Scanner:
    """The compiled rules, once a process: every sync and every gateway request of a process
    shares them (the scanner keeps no state between scans). Base64 is decoded and scanned too
    (two fifths of the scanner's time; finding the runs of base64 first and decoding only those
    was slower still)."""
    from kingfisher_sdk import Rules, Scanner

    rules = resources.files("tracehouse.redaction").joinpath("rules.yml")
    try:
        Path(cache_dir).mkdir(parents=True, exist_ok=True, mode=0o700)
        cached = True
    except OSError:  # a read-only home: compiled each time (seconds), never a failed sync
        cached = False
    with resources.as_file(rules) as path:
        if cached:
            catalog = Rules([str(path)], confidence="medium", cache_dir=cache_dir)
        else:
            catalog = Rules([str(path)], confidence="medium", cache=False)
    return Scanner(catalog, base64=True)


def _named(data: bytes, start: int, end: int, word: str, encoded: bool) -> list[Finding]:
    """The secret a word names (`near.value_after`), as an `assigned-secret`; inside base64, the
    whole encoded run, as the library replaces a secret it found there."""
    if not encoded:
        span = near.value_after(data, start, end)
        if span is None:
            return []
        return [Finding(*span, GENERIC, data[span[0] : span[1]].decode("utf-8", "replace"))]
    text = near.decoded(data, start, end)
    if text is None:
        return []
    needle = word.lower().encode("utf-8", "surrogatepass")
    lowered = text.lower()
    at = lowered.find(needle)
    while at != -1:
        span = near.value_after(text, at, at + len(needle))
        if span is not None:
            secret = text[span[0] : span[1]].decode("utf-8", "replace")
            return [Finding(start, end, GENERIC, secret)]
        at = lowered.find(needle, at + 1)
    return []


def _inside(finding: Finding, markers: list[tuple[int, int]]) -> bool:
    return any(start < finding.end and finding.start < end for start, end in markers)
