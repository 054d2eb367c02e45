"""A Cline task's `ui_messages.json` → ledger rows (README.md here has the mapping).

One JSON array of what the task's panel showed, rewritten whole on every save: `{ts, type:
say|ask, say|ask: subtype, text, partial, modelInfo}`. The first `say: text` is the task's
prompt and each `user_feedback` a later one; `text`, `reasoning`, `completion_result` and a
`followup` question are the model's; `tool` and `command` are calls; `api_req_started` carries
one request's usage (`tokensIn` leaves the cache reads and writes out) and cost; errors and
retries are the host's notices. A message cut short (`partial`) is kept when it has text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tracehouse.model.fields import iso
from tracehouse.parsers.base import SHAPE_ERRORS, ParseOptions, Unit, UnitResult, shape_error
from tracehouse.parsers.cline import cli
from tracehouse.parsers.kit.conversation import Conversation
from tracehouse.parsers.kit.document import Read, parse_document
from tracehouse.parsers.kit.layout import Layout
from tracehouse.parsers.kit.untrusted import decode_json, mapping, not_json, place
from tracehouse.parsers.kit.usage import Usage, dollars

PROVIDER = "cline"
EXTENSION = ("globalStorage", "saoudrizwan.claude-dev")
EDITORS = ("Code", "Code - Insiders", "Cursor", "VSCodium", "Windsurf", "Trae")
# Cline writes "Working", Roo Code and Kilo Code "Workspace"
CWD = re.compile(r"# Current (?:Working|Workspace) Directory \((.+?)\)")
REPLIES = ("text", "completion_result", "reasoning")
NOTICES = ("error", "error_retry", "api_req_retried", "api_req_failed", "mistake_limit_reached",
           "diff_error", "clineignore_error",
           # Roo Code's and Kilo Code's (forks of Cline, the same task layout)
           "rooignore_error", "shell_integration_warning", "condense_context",
           "condense_context_error", "sliding_window_truncation", "too_many_tools_warning",
           "auto_approval_max_req_reached", "subtask_result")  # fmt: skip
QUIET = ("checkpoint_created", "task_progress", "deleted_api_reqs", "resume_task",
         "resume_completed_task", "completion_result", "browser_action_launch",
         "checkpoint_saved", "api_req_finished", "api_req_deleted", "api_req_retry_delayed",
         "api_req_rate_limit_wait", "user_edit_todos", "image", "codebase_search_result",
         "mcp_server_request_started")  # fmt: skip
# `api_req_started`: `tokensIn` leaves the cache reads and writes out, as Anthropic counts.
USAGE = Usage("tokensIn", "tokensOut", "cacheReads", "cacheWrites", input_holds_cache=False)
KNOWN = {"text", "user_feedback", "user_feedback_diff", *REPLIES, "followup", "tool", "command",
         "command_output", "use_mcp_server", "mcp_server_response", "api_req_started", *NOTICES,
         *QUIET}  # fmt: skip
LAYOUT = Layout(PROVIDER, ("tasks/*/ui_messages.json", "tasks/*/claude_messages.json",
                          "sessions/*/*.messages.json"))  # the last, Cline CLI 3's (cli.py)
discover, unit_for, watch_roots = LAYOUT.discover, LAYOUT.unit_for, LAYOUT.watch_roots


def default_roots(home: Path, env: Mapping[str, str]) -> list[Path]:
    """The extension's storage in every VS Code-family editor, on each OS, and the CLI's."""
    return [*extension_storage(home, env, EXTENSION[1]), home / ".cline" / "data"]


def extension_storage(home: Path, env: Mapping[str, str], extension: str) -> list[Path]:
    """An extension's global storage in every VS Code-family editor, on each OS (Cline's and
    its forks', Roo Code and Kilo Code, which keep the same tasks)."""
    bases = [
        Path(env["XDG_CONFIG_HOME"]) if env.get("XDG_CONFIG_HOME") else home / ".config",
        home / "Library" / "Application Support",
        home / "AppData" / "Roaming",  # a Windows home, read from a copy or under WSL
    ]
    if env.get("APPDATA"):
        bases.append(Path(env["APPDATA"]))
    return [base / editor / "User" / "globalStorage" / extension for base in bases
            for editor in EDITORS]  # fmt: skip


def build(unit: Unit, data: bytes, options: ParseOptions) -> Read:
    read = Read()
    records, problem = decode_json(data, list)
    if problem is not None:
        read.incomplete = not_json(problem)
        read.problems.append((place(problem, "document"), f"not a list of messages: {problem}"))
        return read
    task = unit.path.parent.name
    talk = Conversation(unit.provider, task, unit.key, options.max_field)
    state: dict[str, Any] = {}
    for index, record in enumerate(records):
        if not isinstance(record, dict):
            read.problems.append((f"[{index}]", "not an object"))
            continue
        try:
            read.count(_record(talk, record, index, state))
        except SHAPE_ERRORS as exc:
            read.problems.append((f"[{index}]", shape_error(exc)))
    read.sessions.append((talk, {"workspace_path": state.get("cwd"), "entrypoint": "ide"}))
    return read


def _record(talk: Conversation, record: Mapping[str, Any], index: int, state: dict[str, Any]
            ) -> str:  # fmt: skip
    kind = str(record.get("say") or record.get("ask"))
    said = f"{record.get('type')}.{kind}"
    text: str = record["text"] if isinstance(record.get("text"), str) else ""
    condensed = mapping(record.get("contextCondense"))  # Roo Code's: the summary kept
    if kind == "condense_context" and not text:
        text = str(condensed.get("summary") or "")
    at, key = iso(record.get("ts")), str(record.get("ts") or index)
    info = mapping(record.get("modelInfo"))
    model = info.get("modelId") and str(info["modelId"])
    if info:
        talk.note_model(model, info.get("providerId") and str(info["providerId"]))
    meta = {"partial": True} if record.get("partial") else None
    if kind not in KNOWN:
        return talk.unknown(said)
    if kind == "text" and record.get("type") == "say" and not state.get("asked"):
        state["asked"] = True
        talk.prompt(key, text, at)
    elif kind in ("user_feedback", "user_feedback_diff"):
        talk.prompt(key, text, at)
    elif not text.strip():
        return f"empty.{said}"
    elif kind in REPLIES and said != "ask.completion_result":
        thinking = text if kind == "reasoning" else None
        talk.reply(key, None if thinking else text, at, thinking=thinking, model=model,
                   metadata=meta)  # fmt: skip
    elif kind == "followup":
        question = mapping(_json(text)).get("question") or text
        talk.reply(key, str(question), at, model=model, metadata={"followup": True})
    elif kind == "tool":
        call = mapping(_json(text))
        name = str(call.get("tool") or "tool")
        talk.call(key, name, {k: v for k, v in call.items() if k != "content"} or None, at)
        shown = call.get("content") or call.get("diff")
        talk.result(key, shown if isinstance(shown, str) else None, at)
    elif kind == "command":
        state["command"] = key
        talk.call(key, "execute_command", {"command": text}, at)
    elif kind == "command_output" and state.get("command"):
        talk.result(state["command"], text, at)
    elif kind == "use_mcp_server":  # {type, serverName, toolName, arguments} or a resource
        request = mapping(_json(text))
        state["mcp"] = key
        talk.call(key, str(request.get("toolName") or request.get("type") or "use_mcp_server"),
                  request or {"request": text}, at)  # fmt: skip
    elif kind == "mcp_server_response" and state.get("mcp"):
        talk.result(state.pop("mcp"), text, at)
    elif kind == "api_req_started":
        _request(talk, mapping(_json(text)), key, at, state)
    elif kind in NOTICES:
        message = mapping(_json(text)).get("message") or text
        talk.notice(key, str(message), at, {"notice": kind})
    else:
        return f"quiet.{said}"
    return said


def _request(talk: Conversation, request: Mapping[str, Any], key: str, at: str | None,
             state: dict[str, Any]) -> None:  # fmt: skip
    cwd = CWD.search(str(request.get("request") or ""))
    if cwd and "cwd" not in state:
        state["cwd"] = cwd.group(1)
    talk.usage(USAGE.counts(request), dollars(request.get("cost")))
    if request.get("cancelReason"):
        failed = mapping(_json(str(request.get("streamingFailedMessage") or ""))).get("message")
        talk.notice(
            f"{key}#cancel",
            str(failed or request["cancelReason"]),
            at,
            {"notice": "api_req_cancelled", "reason": request["cancelReason"]},
        )


def _json(text: str) -> Any:
    value, problem = decode_json(text, (dict, list))
    return value if problem is None else None


def parse(unit: Unit, cursor: Mapping[str, Any] | None, options: ParseOptions) -> UnitResult:
    if unit.key.endswith(".messages.json"):
        return parse_document(PROVIDER, unit, cursor, options, cli.build)
    return parse_document(unit.provider, unit, cursor, options, build)
