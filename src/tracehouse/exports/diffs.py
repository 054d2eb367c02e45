"""A file edit's change as the lines of a unified diff, whatever the agent called its fields:
the old and new text of an edit (or of each of several), a whole file written, or a patch the
tool was given. The HTML pages colour these lines (`rendering.edit_diff`); `sessions show` and
`browse` print them under the call."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

import orjson

# The keys edit tools name the old and new text, the written content and the file by.
OLD = ("old_string", "oldString", "old_str", "oldText", "old_text")
NEW = ("new_string", "newString", "new_str", "newText", "new_text")
WRITTEN = ("content", "file_text", "contents")
PATH = ("file_path", "filePath", "path", "target_file", "absolute_path")


def edit_lines(params: Any) -> list[str] | None:
    """The diff's lines; None for a call that is not an edit."""
    args = _arguments(params)
    if isinstance(args, str):
        return args.splitlines() if _is_patch(args) else None
    if not isinstance(args, Mapping):
        return None
    path = edited_path(args) or ""
    many = args.get("edits")
    edits: list[Any] = many if isinstance(many, list) else [args]
    found = [(_text(e, OLD), _text(e, NEW)) for e in edits if isinstance(e, Mapping)]
    pairs = [(old, new) for old, new in found if old is not None and new is not None]
    if pairs:
        lines: list[str] = []
        for old, new in pairs:
            lines += difflib.unified_diff(old.splitlines(), new.splitlines(), _side("a", path),
                                          _side("b", path), lineterm="", n=3)  # fmt: skip
        return lines
    written = _text(args, WRITTEN)
    if written is not None and path:
        return [f"+++ {_side('b', path)}", *(f"+{line}" for line in written.splitlines())]
    patch = next((v for v in args.values() if isinstance(v, str) and _is_patch(v)), None)
    return patch.splitlines() if patch else None


def edited_path(params: Any) -> str | None:
    args = _arguments(params)
    if not isinstance(args, Mapping):
        return None
    return next((str(args[k]) for k in PATH if isinstance(args.get(k), str)), None)


def line_kind(line: str) -> str:
    """meta, hunk, add, del or ctx: how a diff's line is shown."""
    if line.startswith(("+++", "---", "***", "diff ", "index ")):
        return "meta"
    if line.startswith("@@"):
        return "hunk"
    return "add" if line.startswith("+") else "del" if line.startswith("-") else "ctx"


def _side(prefix: str, path: str) -> str:
    return f"{prefix}{path}" if path.startswith("/") else f"{prefix}/{path}"


def _is_patch(text: str) -> bool:
    head = text.lstrip()[:200]
    return head.startswith(("*** Begin Patch", "diff --git", "--- ")) or "\n@@ " in text[:2000]


def _arguments(params: Any) -> Any:
    if isinstance(params, str):
        try:
            return orjson.loads(params)
        except orjson.JSONDecodeError:
            return params
    return params


def _text(values: Mapping[str, Any], keys: tuple[str, ...]) -> str | None:
    return next((values[k] for k in keys if isinstance(values.get(k), str)), None)
