"""Replacing found secrets with typed markers, many texts at a time.

A secret becomes `[REDACTED:<kind>:<hash>]`: the kind the rule names and the first 8 hex digits of
an HMAC-SHA256 of the secret under this ledger's key (`redaction/key.py`). The same secret maps to
the same marker everywhere in a ledger, so search, dedupe and fingerprints still work, and without
the key the hash cannot be tested against guesses.

Texts are scanned with JSON's common escapes undone (`\\n`, `\\"`): a private key's lines and a
quoted `.env` value inside tool parameters read as written, and an assignment in JSON is still
`"password": "…"`. Every occurrence of a found secret in the batch is replaced, as it is written
there or as JSON escapes it; a JSON text stays valid JSON.

Nearly every batch holds no secret: it costs one join, one encode and one scan, and comes back
as it was. Only a batch with a finding is taken apart text by text.
"""

from __future__ import annotations

import bisect
import hashlib
import hmac
import json as stdjson
import operator
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import compress
from typing import Any

import orjson

from tracehouse.model.fingerprint import canonical_json
from tracehouse.redaction.detect import GENERIC, SEPARATOR, Detector

_ENCODING = ("utf-8", "surrogatepass")  # a lone surrogate from a log survives the round trip
_JOIN = SEPARATOR.decode()
_MIN = 8  # no rule finds a secret in fewer characters
_CUT = "\n…[cut: "  # what `model/fields.cap` ends a cut field with
# The word a cut ends in, when it looks random: letters and digits, long, no space.
_CUT_WORD = re.compile(r"(?=[^\s]*\d)(?=[^\s]*[A-Za-z])[^\s'\"`]{12,}$")

Markers = dict[str, tuple[str, str]]  # text found → (its marker, its kind)


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
        known: Markers | None = None,
    ) -> Sequence[str | None]:
        """`values` with every secret replaced (the same sequence when nothing is); `json[i]`
        says value i is JSON text. Adds what it replaced to `found` (kind → count). `known`:
        secrets found before, replaced here too wherever they are; what this call finds is
        added to it."""
        scanned, cut = _joined(values, json)
        if cut:  # a title or a field cut at its limit
            clipped = [_clip(v) if v is not None and _CUT in v else v for v in values]
            if any(a is not b for a, b in zip(clipped, values, strict=True)):
                values = clipped
                scanned, _ = _joined(values, json)
        if not known and not self.detector.scan(scanned):
            return values
        found = Counter() if found is None else found
        out = list(values)
        markers: Markers = {} if known is None else known
        pieces, _ = _pieces(out)
        for _, (text, kind, secret) in self._targets(pieces):
            markers.setdefault(text, (self.marker(kind, secret), kind))
        # Each secret as written and as JSON escapes it (in a JSON text, or JSON printed in a
        # result); only those the batch holds are looked for text by text (`known` may hold
        # every secret of a ledger).
        everything = _JOIN.join(filter(None, out))
        forms = [
            (form, text, marker, kind)
            for text, (marker, kind) in markers.items()
            for form in dict.fromkeys((text, _json_escaped(text)))
            if form in everything
        ]
        if not forms:
            return out
        for index, value in enumerate(out):
            if value is None or len(value) < _MIN:
                continue
            here = []
            done: set[str] = set()
            for form, text, marker, kind in forms:
                if text not in done and form in value:
                    here.append((form, text, marker))
                    done.add(text)
                    found[kind] += 1
            if here:
                out[index] = _apply(value, here, json is not None and json[index])
        return out

    def find(self, values: Sequence[str | None]) -> list[tuple[int, str, str]]:
        """What `texts` would replace, without replacing it: (value index, kind, the text
        found) for each secret, for a report."""
        pieces, owner = _pieces(values)
        return [(owner[piece], kind, text) for piece, (text, kind, _) in self._targets(pieces)]

    def _targets(self, pieces: list[str]) -> list[tuple[int, tuple[str, str, str]]]:
        """(piece index, (text found, kind, secret)) for each secret found in the pieces."""
        chunks = [_scanned(p.encode(*_ENCODING)) for p in pieces]  # any text: JSON printed too
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


def _joined(values: Sequence[str | None], json: Sequence[bool] | None) -> tuple[bytes, bool]:
    """All the texts as one buffer to scan, each once (a tool's output is often both a result
    and a message: a fifth of the bytes), the JSON ones with their escapes undone; and whether
    any was cut at its size limit."""
    if json is None:
        plain, structured = _JOIN.join(dict.fromkeys(filter(None, values))), ""
    else:
        plain = _JOIN.join(dict.fromkeys(filter(None, compress(values, map(operator.not_, json)))))
        structured = _JOIN.join(dict.fromkeys(filter(None, compress(values, json))))
    data = plain.encode(*_ENCODING)
    if structured:
        data = SEPARATOR.join((data, _scanned(structured.encode(*_ENCODING))))
    return data, _CUT in plain or _CUT in structured


def _pieces(values: Sequence[str | None]) -> tuple[list[str], list[int]]:
    """The texts to scan, each once, and the value each came from."""
    pieces: list[str] = []
    owner: list[int] = []
    seen: set[str] = set()
    for i, value in enumerate(values):
        if value is None or len(value) < _MIN or value in seen:
            continue
        seen.add(value)
        pieces.append(value)
        owner.append(i)
    return pieces, owner


def _scanned(data: bytes) -> bytes:
    """JSON text as it is scanned: an escaped quote or line break read as one, each in the
    same number of bytes (` "`, ` \\n`: a replacement that keeps the length is twice as fast).
    A private key's lines are read as exactly what they are: its rules want nothing between.
    (An escaped backslash before an `n` reads as a line break too: it only ever ends a value.)"""
    if b"\\" not in data:
        return data
    out = data.replace(b'\\"', b' "')
    return out.replace(b"\\n", b"\n" if b"-----BEGIN" in out else b" \n")


def _json_escaped(text: str) -> str:
    """`text` as a JSON string holds it (the stdlib's encoder: orjson refuses a lone surrogate,
    which a log may hold)."""
    return stdjson.dumps(text, ensure_ascii=False)[1:-1]


def _clip(value: str) -> str:
    """A field cut at the size limit may end in part of a secret no rule can know (a token
    without its checksum): the fragment of a random-looking word at the cut is dropped."""
    head, mark, tail = value.rpartition(_CUT)
    end = head[-512:]  # no secret is longer: the search stays short on a long field
    match = _CUT_WORD.search(end)
    if match is None:
        return value
    return f"{head[: len(head) - len(end) + match.start()]}…{mark}{tail}"


def _decode(span: bytes) -> str:
    try:
        return span.decode(*_ENCODING)
    except UnicodeDecodeError:  # a span that cut a character: what is whole of it
        return span.decode("utf-8", "ignore")


def _apply(value: str, replacements: list[tuple[str, str, str]], is_json: bool) -> str:
    """`value` with each (form, text, marker) replaced, the longest first so that a secret
    inside another is not cut in two. A JSON text stays JSON: where a replacement broke it (a
    match that took in a quote or half an escape), the secrets are replaced in its strings."""
    ordered = sorted(replacements, key=lambda r: -len(r[0]))
    out = value
    for form, _, marker in ordered:
        out = out.replace(form, marker)
    if is_json and not _valid_json(out):
        try:
            whole = orjson.loads(value)
        except orjson.JSONDecodeError:
            return out
        pairs = [(text, marker) for _, text, marker in ordered]
        return canonical_json(_replace_strings(whole, pairs)).decode()
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
