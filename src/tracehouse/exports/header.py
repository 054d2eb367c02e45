"""The header of an exported session (Markdown, HTML): what it is, where it ran, what it cost,
and how to continue it."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from tracehouse.model.timeline import Row


def header_fields(
    s: Row, labels: dict[str, str], when: Callable[[str | None], str]
) -> Iterator[tuple[str, str, str | None]]:
    """(name, value, session id it links to) for an exported session's header; fields the
    session does not have are left out."""
    parent = s.get("parent_session_id")
    tokens = s.get("total_tokens")
    fields = [
        ("Session", f"{s['label']} · {s['source_provider']} {s['source_session_id']}", None),
        ("Project", s.get("workspace_path"), None),
        ("Branch", s.get("git_branch"), None),
        ("Model", s.get("model"), None),
        ("Time", f"{when(s.get('created_at'))} → {when(s.get('updated_at'))}", None),
        ("Parent", parent and labels.get(parent, parent), parent),
        ("Task", s.get("task_description"), None),
        ("Counts", f"{s['turn_count']} turns · {s['message_count']} messages ·"
                   f" {s['tool_call_count']} tool calls", None),
        ("Tokens", f"not recorded by {s['source_provider']}" if tokens is None
         else f"{tokens:,} total · {s['input_tokens'] or 0:,} in ·"
         f" {s['output_tokens'] or 0:,} out · {s['cached_input_tokens'] or 0:,} cache read ·"
         f" {s['cache_write_tokens'] or 0:,} cache write", None),
    ]  # fmt: skip
    from tracehouse.resume.plan import hint  # its writers load only when a header is drawn

    fields.append(("Resume", hint(s), None))
    for name, value, linked in fields:
        if value:
            yield name, str(value), linked
