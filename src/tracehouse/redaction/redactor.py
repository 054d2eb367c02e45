"""Replacing found secrets with typed markers, many texts at a time.

A secret becomes `[REDACTED:<kind>:<hash>]`: the kind the rule names and the first 8 hex digits of
an HMAC-SHA256 of the secret under this ledger's key (`redaction/key.py`). The same secret maps to
the same marker everywhere in a ledger, so search, dedupe and fingerprints still work, and without
the key the hash cannot be tested against guesses.

Every occurrence of a found secret in its text is replaced, not only the span the rule matched:
a token pasted twice in one tool result goes twice. A JSON text (tool params, metadata) is
scanned as written (an assignment is `"password": "…"` there) and, where it holds escapes, as its
decoded strings too (a private key's newlines are `\\n` in JSON); it stays valid JSON.
"""

from __future__ import annotations

import bisect
import hashlib
import hmac
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from tracehouse.model.fingerprint import canonical_json
from tracehouse.redaction.detect import GENERIC, SEPARATOR, Detector

_ENCODING = ("utf-8", "surrogatepass")  # a lone surrogate from a log survives the round trip
_MIN = 8  # no rule finds a secret in fewer characters


@dataclass
class Redactor:
    key: bytes
    detector: Detector

    def marker(self, kind: str, secret: str) -> str:
        digest = hmac.new(self.key, secret.encode(*_ENCODING), hashlib.sha256).hexdigest()
        return f"[REDACTED:{kind}:{digest[:8]}]"

    def texts(
        self,
        values: Sequence[str | None],
        json: Sequence[bool] | None = None,
        found: Counter[str] | None = None,
        known: dict[str, tuple[str, str]] | None = None,
    ) -> list[str | None]:
        """`values` with every secret replaced; `json[i]` says value i is JSON text. Adds what
        it replaced to `found` (kind → count). `known` (text → (marker, kind)): secrets found
        before, replaced here too wherever they are; what this call finds is added to it."""
        found = Counter() if found is None else found
        values = self.clip_cut(list(values))
        pieces, _, parsed = _pieces(values, json)
        targets = self._targets(pieces)
        if not targets and not known:
            return list(values)
        # A secret found anywhere in the batch is replaced wherever it is in the batch: the
        # token an assignment gave away is the same token when the agent repeats it in prose.
        markers: dict[str, tuple[str, str]] = {} if known is None else known
        for _, (text, kind, secret) in targets:
            marker = self.marker(kind, secret)
            markers.setdefault(text, (marker, kind))
            if "\\" in text:  # found in JSON as written: its strings hold it unescaped
                unescaped = _unescape(text)
                if unescaped is not None:
                    markers.setdefault(unescaped, (marker, kind))
        out = list(values)
        for index, value in enumerate(values):
            if value is None or len(value) < _MIN:
                continue
            is_json = json is not None and json[index]
            here = []
            for text, (marker, kind) in markers.items():
                decoded = is_json and _escaped(text)
                if decoded and index in parsed:
                    present = any(text in leaf for leaf in _strings(parsed[index]))
                else:
                    present = not decoded and text in value
                if present:
                    here.append((text, marker, decoded))
                    found[kind] += 1
            if here:
                out[index] = _apply(value, here, parsed.get(index), is_json)
        return out

    def clip_cut(self, values: list[str | None]) -> list[str | None]:
        """A field cut at the size limit may end in part of a secret no rule can know (a token
        without its checksum): the fragment of a random-looking word at the cut is dropped."""
        return [_clip(v) if v is not None and _CUT in v else v for v in values]

    def find(
        self, values: Sequence[str | None], json: Sequence[bool] | None = None
    ) -> list[tuple[int, str, str]]:
        """What `texts` would replace, without replacing it: (value index, kind, the text
        found) for each secret, for a report."""
        pieces, owner, _ = _pieces(values, json)
        return [(owner[piece][0], kind, text) for piece, (text, kind, _) in self._targets(pieces)]

    def _targets(self, pieces: list[str]) -> list[tuple[int, tuple[str, str, str]]]:
        """(piece index, (text to replace, kind, secret)) for each secret found in the pieces."""
        chunks = [p.encode(*_ENCODING) for p in pieces]
        starts, at = [], 0
        for chunk in chunks:
            starts.append(at)
            at += len(chunk) + len(SEPARATOR)
        # A provider's rule names a secret better than an assignment does: it goes first.
        findings = sorted(
            self.detector.scan(SEPARATOR.join(chunks)), key=lambda f: f.kind == GENERIC
        )
        seen: set[tuple[int, str]] = set()
        out = []
        for f in findings:
            piece = bisect.bisect_right(starts, f.start) - 1
            base = starts[piece]
            end = min(f.end, base + len(chunks[piece]))
            text = _decode(chunks[piece][f.start - base : end - base])
            if len(text) < 4 or (piece, text) in seen:
                continue
            seen.add((piece, text))
            out.append((piece, (text, f.kind, f.secret)))
        return out


_CUT = "\n…[cut: "
# The word a cut ends in, when it looks random: letters and digits, long, no space.
_CUT_WORD = re.compile(r"(?=[^\s]*\d)(?=[^\s]*[A-Za-z])[^\s'\"`]{12,}$")


def _clip(value: str) -> str:
    head, mark, tail = value.rpartition(_CUT)
    end = head[-512:]  # no secret is longer: the search stays short on a long field
    match = _CUT_WORD.search(end)
    if match is None:
        return value
    return f"{head[: len(head) - len(end) + match.start()]}…{mark}{tail}"


def _pieces(
    values: Sequence[str | None], json: Sequence[bool] | None
) -> tuple[list[str], list[tuple[int, bool]], dict[int, Any]]:
    """The texts to scan: each value, and the decoded strings of a JSON value that holds
    escapes; with, for each, (its value's index, decoded or not), and the parsed JSON values."""
    pieces: list[str] = []
    owner: list[tuple[int, bool]] = []
    parsed: dict[int, Any] = {}
    for i, value in enumerate(values):
        if value is None or len(value) < _MIN:
            continue
        pieces.append(value)
        owner.append((i, False))
        if json is not None and json[i] and "\\" in value:
            try:
                parsed[i] = orjson.loads(value)
            except orjson.JSONDecodeError:
                continue
            for leaf in _strings(parsed[i]):
                pieces.append(leaf)
                owner.append((i, True))
    return pieces, owner, parsed


def _escaped(text: str) -> bool:
    """Whether JSON writes `text` otherwise than as it is (a quote, a backslash, a newline)."""
    return '"' in text or "\\" in text or any(ord(c) < 0x20 for c in text)


def _unescape(text: str) -> str | None:
    try:
        value = orjson.loads(f'"{text}"')
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, str) and value != text else None


def _decode(span: bytes) -> str:
    try:
        return span.decode(*_ENCODING)
    except UnicodeDecodeError:  # a span that cut a character: what is whole of it
        return span.decode("utf-8", "ignore")


def _strings(value: Any) -> list[str]:
    """The strings in a JSON value long enough to hold a secret: keys are not."""
    out, stack = [], [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if len(item) >= _MIN:
                out.append(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return out


def _apply(
    value: str, replacements: list[tuple[str, str, bool]], parsed: Any, is_json: bool
) -> str:
    """`value` with each (text, marker) replaced, the longest first so that a secret inside
    another is not cut in two. Decoded JSON strings are replaced in the parsed value, which is
    written back as canonical JSON; JSON text stays JSON whatever a rule matched across."""
    ordered = sorted(replacements, key=lambda r: -len(r[0]))
    raw = [(text, marker) for text, marker, decoded in ordered if not decoded]
    decoded = [(text, marker) for text, marker, is_decoded in ordered if is_decoded]
    out = value
    if decoded and parsed is not None:
        out = canonical_json(_replace_strings(parsed, decoded)).decode()
    for text, marker in raw:
        out = out.replace(text, marker)
    if is_json and not _valid_json(out):
        # A match that took in a quote or an escape: replace in the strings instead.
        try:
            whole = orjson.loads(value)
        except orjson.JSONDecodeError:
            return out
        return canonical_json(_replace_strings(whole, [(t, m) for t, m, _ in ordered])).decode()
    return out


def _valid_json(text: str) -> bool:
    try:
        orjson.loads(text)
    except orjson.JSONDecodeError:
        return False
    return True


def _replace_strings(value: Any, pairs: list[tuple[str, str]]) -> Any:
    if isinstance(value, str):
        for text, marker in pairs:
            value = value.replace(text, marker)
        return value
    if isinstance(value, dict):
        return {k: _replace_strings(v, pairs) for k, v in value.items()}
    if isinstance(value, list):
        return [_replace_strings(v, pairs) for v in value]
    return value
