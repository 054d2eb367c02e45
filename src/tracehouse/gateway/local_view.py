"""`tracehouse open`: the web view of this machine's ledger for the person who asked, signed in
through a one-time link (as Jupyter's notebook server does).

The view listens on 127.0.0.1 only. It knows one read token of its own, in memory, never in
the ledger: the one-time link exchanges its code for that token in an HttpOnly cookie, once.
Another local user can reach the port, but holds neither the code (already used, and opened
through a file only its owner can read) nor the token.
"""

from __future__ import annotations

import hmac
import secrets
import threading
from dataclasses import dataclass, field
from pathlib import Path

ONCE_PATH = "/login/once"


@dataclass
class LocalAccess:
    token: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    code: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    _used: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def exchange(self, code: str) -> str | None:
        """The view's token for its one-time code, the first time only."""
        with self._lock:
            if self._used or not hmac.compare_digest(code.encode(), self.code.encode()):
                return None
            self._used = True
            return self.token

    def holds(self, token: str) -> bool:
        return hmac.compare_digest(token.encode(), self.token.encode())

    def link(self, base: str, then: str = "/") -> str:
        from urllib.parse import urlencode

        return f"{base}{ONCE_PATH}?{urlencode({'code': self.code, 'next': then})}"


def opener_file(folder: Path, link: str) -> Path:
    """A page that sends the browser on to `link`, readable by its owner alone: the browser is
    given this file rather than the link, which a command line would show to every local user."""
    from html import escape

    page = folder / "open.html"
    page.touch(mode=0o600)
    page.write_text(
        "<!doctype html><meta charset=utf-8><title>tracehouse</title>"
        f'<meta http-equiv="refresh" content="0;url={escape(link, quote=True)}">'
        f'<a href="{escape(link, quote=True)}">Open the ledger</a>',
        encoding="utf-8",
    )
    return page


def local_path(then: str) -> str:
    """Where a one-time link may send the browser on: a path of this view, nothing else."""
    if not then.startswith("/") or then.startswith("//") or "\\" in then:
        return "/"
    return then
