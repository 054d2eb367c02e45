"""Pure helpers over Claude Code records: what a line is, its text, its sources (FORMATS §1)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import xxhash

from tracehouse.model.fields import cap as cap  # re-exported for the builder
from tracehouse.model.fields import count
from tracehouse.model.tokens import ledger_counts
from tracehouse.parsers.kit.untrusted import items, mapping

# Record types that only describe the session: folded into the session row's metadata.
SESSION_METADATA_TYPES = frozenset(
    {
        "summary",
        "ai-title",
        "custom-title",
        "agent-name",
        "last-prompt",
        "permission-mode",
        "mode",
        "pr-link",
        "frame-link",
        "worktree-state",
        "relocated",
        "bridge-session",
        "atis-latch",
        "started",
        "result",
        "tracehouse-origin",  # `tracehouse resume` wrote the session from another one
    }
)
# Record types ignored by a named rule (counted in the session metadata, no row).
IGNORED_TYPES = {
    "file-history-snapshot": "editor backup bookkeeping, not conversation",
    # hook_progress is structural; agent_progress mirrors a running subagent's messages, whose
    # originals are in the subagent's own transcript (counted as progress/agent_progress)
    "progress": "hook progress, or a mirror of a subagent's own transcript",
    # 2.1.3xx's record of each API request (its shape, its body, what it cost, the tools it
    # offered): the conversation itself is in the user and assistant lines
    "api-request": "the API request Claude Code sent, as bookkeeping",
    "api-request-shape": "the shape of the API requests, as bookkeeping",
    "api-request-blob": "an API request's body, as bookkeeping",
    "cost-state": "Claude Code's running cost estimate",
    "tools-used": "the tools a request offered",
}
# Attachments that put a file into the model's context: message_sources of the turn's prompt.
FILE_ATTACHMENTS = frozenset(
    {"file", "nested_memory", "compact_file_reference", "edited_text_file"}
)
# Attachments whose text the model sees as part of the conversation.
CONTEXT_ATTACHMENTS = frozenset({"hook_additional_context", "queued_command"})

# Envelope keys every conversational line may carry; anything else is kept in metadata.
KNOWN_KEYS = frozenset(
    {
        "type",
        "uuid",
        "parentUuid",
        "logicalParentUuid",
        "sessionId",
        "session_id",
        "timestamp",
        "cwd",
        "gitBranch",
        "version",
        "isSidechain",
        "agentId",
        "userType",
        "entrypoint",
        "isMeta",
        "slug",
        "message",
        "requestId",
        "toolUseResult",
        "sourceToolAssistantUUID",
        "sourceToolUseID",
        "promptId",
        "permissionMode",
        "isCompactSummary",
        "isVisibleInTranscriptOnly",
        "isApiErrorMessage",
        "subtype",
        "content",
        "level",
        "attachment",
        "todos",
        "thinkingMetadata",
        "origin",
        "promptSource",
        "effort",
        "teamName",
        "toolDenialKind",
        "sessionKind",
    }
)


@dataclass(frozen=True)
class Kind:
    role: str
    message_type: str
    source: str | None = None  # attribution: how the message arrived


PROMPT = Kind("user", "user")
TOOL_RESULT = Kind("tool", "tool_result")


def classify_user(record: dict[str, Any], text: str, has_tool_result: bool) -> Kind:
    """Typed prompts are `user`; harness context `system`; operational notices `host`."""
    if has_tool_result:
        return TOOL_RESULT
    if record.get("isCompactSummary"):
        return Kind("system", "system", "compaction-summary")
    if record.get("isMeta"):
        return Kind("system", "system", "harness")
    head = text.lstrip()[:40]
    if head.startswith("[Request interrupted by user"):
        return Kind("user", "host", "interrupt")
    if head.startswith(("<local-command-stdout>", "<local-command-stderr>")):
        return Kind("user", "host", "local-command")
    if head.startswith(("<command-name>", "<command-message>")):
        return Kind("user", "user", "slash-command")
    if head.startswith("<bash-input>"):
        return Kind("user", "user", "bash")
    if head.startswith(("<bash-stdout>", "<bash-stderr>")):
        return Kind("system", "system", "bash-output")
    if head.startswith("<task-notification>"):
        return Kind("system", "system", "task-notification")
    if head.startswith("<teammate-message"):
        return Kind("user", "user", "teammate")
    return PROMPT


def origin(r: dict[str, Any]) -> dict[str, Any]:
    """How a prompt arrived, as the record says: entrypoint, origin kind and sender."""
    found = r.get("origin")
    kind = found if isinstance(found, dict) else {}
    return {
        "entrypoint": r.get("entrypoint"),
        "origin": kind.get("kind"),
        "from": kind.get("from"),
        "prompt_source": r.get("promptSource"),
    }


def block_text(block: Any) -> str:
    """Readable text of one content block; images become a short placeholder with their hash."""
    if isinstance(block, str):
        return block
    if not isinstance(block, dict):
        return ""
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text") or "")
    if kind == "image":
        source = mapping(block.get("source"))
        data = source.get("data") or ""
        digest = xxhash.xxh3_64_hexdigest(str(data).encode()) if data else "-"
        return f"[image {source.get('media_type', '?')}, {len(data)} b64 chars, xxh3 {digest}]"
    if kind == "tool_result":
        return content_text(block.get("content"))
    return ""


def content_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(t for t in (block_text(b) for b in content) if t)
    return str(content)


def usage_tuple(usage: Any) -> tuple[int, int, int, int, int]:
    """(input, output, cache read, cache write, thinking) from an API usage object, in the
    ledger's convention (`model/tokens.py`): Anthropic's `input_tokens` leave the cache reads
    and writes out, the ledger's input holds them; thinking is part of the output already."""
    if not isinstance(usage, dict):
        return (0, 0, 0, 0, 0)

    details = usage.get("output_tokens_details")
    thinking = details.get("thinking_tokens") if isinstance(details, dict) else None
    counts = ledger_counts(
        input=count(usage.get("input_tokens"), "usage.input_tokens"),
        output=count(usage.get("output_tokens"), "usage.output_tokens"),
        cache_read=count(usage.get("cache_read_input_tokens"), "usage.cache_read_input_tokens"),
        cache_write=count(
            usage.get("cache_creation_input_tokens"), "usage.cache_creation_input_tokens"
        ),
        reasoning=count(thinking, "usage.output_tokens_details.thinking_tokens"),
        input_holds_cache=False,
        output_holds_reasoning=True,
    )
    return (counts["input_tokens"], counts["output_tokens"], counts["cached_input_tokens"],
            counts["cache_write_tokens"], counts["reasoning_tokens"])  # fmt: skip


def web_sources(tool_name: str, result: Any) -> list[dict[str, Any]]:
    """URLs a WebSearch / WebFetch result cited, as message_sources rows (without ids)."""
    if not isinstance(result, dict):
        return []
    out: list[dict[str, Any]] = []
    if tool_name == "WebFetch" or (result.get("url") and "code" in result):
        url = result.get("url")
        if isinstance(url, str) and url:
            out.append(
                {
                    "source_type": "url",
                    "uri": url,
                    "title": None,
                    "content_preview": _preview(result.get("result")),
                }
            )
    if tool_name == "WebSearch" or "query" in result:
        for entry in items(result.get("results")):
            for hit in items(entry.get("content")) if isinstance(entry, dict) else []:
                if isinstance(hit, dict) and isinstance(hit.get("url"), str):
                    out.append(
                        {
                            "source_type": "web_search",
                            "uri": hit["url"],
                            "title": hit.get("title"),
                            "content_preview": None,
                            "metadata": {"query": result.get("query")},
                        }
                    )
    return out


def file_source(tool_name: str, params: Any, result: Any) -> dict[str, Any] | None:
    """A file the model read (Read tool): a `file` source of the tool result message."""
    path = None
    if isinstance(result, dict) and isinstance(result.get("file"), dict):
        path = result["file"].get("filePath")
    if path is None and tool_name == "Read" and isinstance(params, dict):
        path = params.get("file_path")
    if not isinstance(path, str) or not path:
        return None
    preview = (
        result["file"].get("content")
        if isinstance(result, dict) and isinstance(result.get("file"), dict)
        else None
    )
    return {"source_type": "file", "uri": path, "title": None, "content_preview": _preview(preview)}


def attachment_source(attachment: dict[str, Any]) -> dict[str, Any] | None:
    path = attachment.get("filename") or attachment.get("path") or attachment.get("displayPath")
    content = attachment.get("content")
    if isinstance(content, dict):
        file = content.get("file")
        inner: dict[str, Any] = file if isinstance(file, dict) else content
        path = path or inner.get("filePath") or inner.get("path")
        content = inner.get("content")
    if not isinstance(path, str) or not path:
        return None
    return {
        "source_type": "file",
        "uri": path,
        "title": attachment.get("displayPath"),
        "content_preview": _preview(content if isinstance(content, str) else None),
        "metadata": {"attachment": attachment.get("type")},
    }


def _preview(text: Any, limit: int = 280) -> str | None:
    if not isinstance(text, str) or not text:
        return None
    return text if len(text) <= limit else text[:limit] + "…"


# What a system line's message keeps of it, besides its text.
SYSTEM_KEYS = (
    "level",
    "compactMetadata",
    "logicalParentUuid",
    "hookCount",
    "stopReason",
    "retryAttempt",
    "apiRefusalCategory",
)


def system_text(r: dict[str, Any]) -> str:
    """A system line's text: its content, else its error's message, else its subtype."""
    text = r.get("content") if isinstance(r.get("content"), str) else None
    error = r.get("error")
    if not text and isinstance(error, dict):
        text = str(error.get("message") or error.get("type") or "")
    return text or str(r.get("subtype") or "system")


def system_metadata(r: dict[str, Any]) -> dict[str, Any]:
    return {"subtype": r.get("subtype"), **{k: r[k] for k in SYSTEM_KEYS if r.get(k) is not None}}
