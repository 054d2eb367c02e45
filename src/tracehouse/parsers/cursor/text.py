"""A bubble's text, from whichever field its generation wrote (FORMATS §3.3).

`text` first; `text` is empty on tool-call and thinking bubbles. Then `richText` and `initText`,
which hold Lexical editor state (JSON text: paragraphs of text and mention nodes), then
`rawText` (C0), the C0 `delegate.a`, and `content` / `message` as public readers do.
"""

from __future__ import annotations

from typing import Any

import orjson

BLOCKS = {"paragraph", "heading", "quote", "code", "listitem"}


def bubble_text(bubble: dict[str, Any]) -> str | None:
    text = bubble.get("text")
    if isinstance(text, str) and text.strip():
        return text
    for key in ("richText", "initText"):
        found = lexical_text(bubble.get(key))
        if found:
            return found
    delegate = bubble.get("delegate")
    for value in (
        bubble.get("rawText"),
        delegate.get("a") if isinstance(delegate, dict) else None,
        bubble.get("content"),
        bubble.get("message"),
    ):
        if isinstance(value, str) and value.strip():
            return value
    return None


def lexical_text(value: Any) -> str | None:
    """Plain text of a Lexical editor state: block nodes end a line, inline nodes are joined."""
    if isinstance(value, str):
        if not value.lstrip().startswith("{"):
            return value.strip() or None
        try:
            value = orjson.loads(value)
        except orjson.JSONDecodeError:
            return None
    if not isinstance(value, dict):
        return None
    root = value.get("root", value)
    lines: list[str] = []
    _walk(root, lines)
    text = "\n".join(lines).strip()
    return text or None


def _walk(node: Any, lines: list[str]) -> None:
    if not isinstance(node, dict):
        return
    children = node.get("children")
    if isinstance(children, list) and node.get("type") in BLOCKS:
        lines.append("".join(_inline(c) for c in children))
        return
    if isinstance(children, list):
        for child in children:
            _walk(child, lines)
    elif isinstance(node.get("text"), str):
        lines.append(node["text"])


def _inline(node: Any) -> str:
    if not isinstance(node, dict):
        return ""
    if node.get("type") == "linebreak":
        return "\n"
    if isinstance(node.get("text"), str):
        return str(node["text"])
    children = node.get("children")
    return "".join(_inline(c) for c in children) if isinstance(children, list) else ""
