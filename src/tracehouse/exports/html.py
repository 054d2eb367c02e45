"""Sessions as self-contained HTML pages, and an `index.html` to find them by.

A page needs nothing but itself: styles and the index's filter script are inline, so a file
opens offline, from a zip, or on a phone. What people and models wrote is rendered as Markdown
with its code highlighted, a file edit as a diff, and anything else a transcript holds — tool
parameters and results, thinking, the host's notices — shown as written; all of it sanitised
(`rendering.py`). Tool calls, long results and thinking are `<details>` (collapsed; they open
on click with no script), and subagents are nested conversations under the call that spawned
them, as deep as they go. Every message has a permalink. The gateway's pages render through the
same templates; it may serve a long result on demand (`result_href`) instead of inline.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from typing import TYPE_CHECKING, Any

from tracehouse.exports.header import header_fields
from tracehouse.exports.rendering import Renderer, code_css, edit_diff, folded, shown_text
from tracehouse.model.stored_json import decode_mapping
from tracehouse.model.timeline import (
    children_by_call,
    message_notes,
    pretty_params,
    role_title,
    session_title,
    timeline,
    unplaced_children,
)

if TYPE_CHECKING:
    import jinja2

Row = dict[str, Any]
MAX_DEPTH = 6  # subagents nested deeper than this are linked, not drawn inside each other


class Pages:
    """Renders pages of one export: `stems` names every exported session's file (for links),
    `when` formats stored times, `load` reads a session (for the subagents drawn inline)."""

    def __init__(
        self,
        stems: dict[str, str],
        when: Callable[[str | None], str],
        load: Callable[[str], dict[str, Any]],
        *,
        context_only: bool = False,
        href: Callable[[str], str] = lambda stem: f"{stem}.html",
        home: str = "index.html",
        live: str | None = None,
        nonce: str | None = None,
        renderer: Renderer | None = None,
        result_href: Callable[[str], str] | None = None,
    ) -> None:
        self.stems = stems
        self.when = when
        self.load = load
        self.context_only = context_only
        # The gateway serves the same pages: its links, its list, and the URL an open page
        # polls to see whether its session changed (`live`).
        self.href = href
        self.home = home
        self.live = live
        self.nonce = nonce  # the page's one script runs under the gateway's CSP with it
        self.renderer = renderer or Renderer()
        # Where a folded result is fetched from when opened (the gateway); None: inline.
        self.result_href = result_href

    @cached_property
    def templates(self) -> jinja2.Environment:
        import jinja2

        return jinja2.Environment(
            loader=jinja2.PackageLoader("tracehouse.exports", "templates"),
            autoescape=True,
            finalize=shown_text,
            trim_blocks=True,
            lstrip_blocks=True,
            undefined=jinja2.StrictUndefined,
        )

    def session(self, detail: dict[str, Any]) -> str:
        s = detail["session"]
        return self.templates.get_template("session.html.j2").render(
            title=session_title(s),
            header=[
                (name, value, self.link(linked))
                for name, value, linked in header_fields(s, detail.get("labels", {}), self.when)
            ],
            entries=self._entries(detail, depth=0, seen={s["session_id"]}),
            unplaced=[self._child(c) for c in unplaced_children(detail)],
            home=self.home,
            live=self.live,
            nonce=self.nonce,
            fingerprint=s.get("fingerprint") or "",
            code_css=code_css(),
        )

    def index(self, sessions: list[Row]) -> str:
        rows = [
            {
                "href": self.link(r["session_id"]),
                "label": r["label"],
                "title": session_title(r),
                "provider": r["source_provider"],
                "project": r["project"] or "",
                # The date filter compares the date the reader sees, in the reader's zone.
                "day": self.when(r["updated_at"] or r["created_at"])[:10],
                "when": self.when(r["updated_at"] or r["created_at"]),
                "messages": r["message_count"] or 0,
                "tokens": f"{r['total_tokens']:,}" if r["total_tokens"] else "—",
                "subagent": bool(r["is_subagent"]),
            }
            for r in reversed(sessions)  # newest first
        ]
        return self.templates.get_template("index.html.j2").render(
            rows=rows,
            providers=sorted({r["provider"] for r in rows}),
            projects=sorted({r["project"] for r in rows if r["project"]}),
        )

    def link(self, session_id: str | None) -> str | None:
        stem = self.stems.get(session_id or "")
        return self.href(stem) if stem else None

    def _entries(self, detail: dict[str, Any], depth: int, seen: set[str]) -> list[Row]:
        labels: dict[str, str] = detail.get("labels", {})
        children = children_by_call(detail)
        out: list[Row] = []
        for entry in timeline(detail, context_only=self.context_only):
            m = entry.message
            shown = m is not None and not entry.is_tool_result
            out.append(
                {
                    "message": None if not shown or m is None else self._message(m, labels),
                    "calls": [
                        self._call(c, children.get(c["tool_call_id"]), depth, seen)
                        for c in entry.calls
                    ],
                    "sources": [_source(s) for s in entry.sources],
                }
            )  # fmt: skip
        return out

    def _message(self, m: Row, labels: dict[str, str]) -> Row:
        content = m.get("content") or ""
        host = m["message_type"] == "host"
        return {
            "id": m["message_id"],
            "role": m["role"] if not host else "host",
            "title": role_title(m),
            "notes": " ".join([*message_notes(m, labels), *_image_note(m)]),
            "when": self.when(m.get("created_at")),
            "model": m.get("model") or "",
            "thinking": m.get("thinking") or "",
            # what a person or a model wrote is Markdown; the host's words are shown as written
            "html": self.renderer.markdown(content) if content and not host else None,
            "content": content,
        }

    def _call(self, call: Row, child: Row | None, depth: int, seen: set[str]) -> Row:
        nested = None
        if child is not None and depth < MAX_DEPTH and child["session_id"] not in seen:
            detail = self.load(child["session_id"])
            nested = self._entries(detail, depth + 1, seen | {child["session_id"]})
        result = call.get("result") or ""
        size = folded(result)
        return {
            "name": call["tool_name"],
            "status": call.get("status") or "",
            "diff": edit_diff(call.get("params")),
            "params": pretty_params(call.get("params")),
            "result": result,
            "size": size,
            "href": self.result_href(call["tool_call_id"]) if size and self.result_href else None,
            "error": call.get("error") or "",
            "child": self._child(child) if child is not None else None,
            "nested": nested,
        }

    def _child(self, child: Row) -> Row:
        return {
            "label": child["label"],
            "href": self.link(child["session_id"]),
            "task": child.get("task_description") or child.get("title") or "",
            "messages": child["message_count"],
        }


def _source(source: Row) -> Row:
    uri = source.get("uri") or ""
    return {
        "title": source.get("title") or uri or source["source_id"],
        "href": uri if uri.startswith(("http://", "https://")) else None,
        "type": source["source_type"],
    }


def _image_note(m: Row) -> list[str]:
    """The images a message had: the ledger keeps their count, not their bytes (a transcript's
    base64 would make every page and export huge), so a reader learns they were there."""
    meta, _problem = decode_mapping(m.get("metadata"))
    images = meta.get("images") if meta else None
    if isinstance(images, int) and not isinstance(images, bool) and images > 0:
        return [f"{images} image{'s' if images > 1 else ''} (not kept)"]
    return []
