"""The characters a label may hold, and a producer's label hint brought to them.

A label is typed in a terminal, pasted into a shell, put in a URL path and read by an agent,
and a hint comes from whoever pushed the session. So a label is lower-case ASCII letters and
digits with `.`, `_` and `-` inside, starting with a letter or digit: nothing a shell, a
terminal, a URL or a bidirectional text reads as anything but itself.
"""

from __future__ import annotations

import re
import unicodedata

from tracehouse.errors import ValidationError

HINT_LONGEST = 64
# A label's whole shape, for `fullmatch`: `^…$` with `match` let a final newline through, and a
# printed `resume` hint then named no session at all ("None").
SAFE_LABEL = re.compile(r"[a-z0-9][a-z0-9._-]{0,95}")
_OUTSIDE = re.compile(r"[^a-z0-9._-]+")
_DASHES = re.compile(r"--+")


def label_hint(value: str, where: str = "session.labelHint") -> str:
    """A hint as a label: compatibility forms folded (`ｄｅｐｌｏｙ` → `deploy`), lower case,
    every run of other characters and dashes one `-` (`Deploy Fix/2` → `deploy-fix-2`), at
    most 64 characters. A hint with no letter or digit left is refused, naming `where`."""
    folded = unicodedata.normalize("NFKC", value).lower()
    label = _DASHES.sub("-", _OUTSIDE.sub("-", folded)).lstrip("._-")[:HINT_LONGEST].rstrip("._-")
    if label == "last":  # `last` names the most recent session wherever a session is named
        raise ValidationError(f"{where}: 'last' is reserved for the most recent session")
    if not label:
        raise ValidationError(
            f"{where}: {ascii(value)[:80]} has no letter or digit a label can hold"
            " (a-z, 0-9, with '.', '_' and '-' inside)"
        )
    return label


def reference(label: str | None, session_id: str) -> str:
    """What a printed command names a session by: its label where that has the safe shape every
    label now has, else its id (a label stored by an older release, or read from elsewhere)."""
    return label if label and SAFE_LABEL.fullmatch(label) else session_id
