"""`docs/schema.md`, generated from the table declarations: `python -m tracehouse.model.schema_doc`.

The types, keys, required columns and the columns a fingerprint covers come from `tables.py`;
what each table and column means is written here, beside them. A test renders the page and
compares it with the committed file, and refuses a column without a description, so the page
cannot drift from the ledger.
"""

from __future__ import annotations

from tracehouse.model.columns import Column, Table
from tracehouse.model.tables import ALL_TABLES, PROVIDERS

_TOKENS = {
    "input_tokens": "Prompt tokens, cache reads and writes included (every provider).",
    "output_tokens": "Completion tokens, reasoning included.",
    "cached_input_tokens": "Prompt tokens read from the provider's cache (part of input).",
    "cache_write_tokens": "Prompt tokens written to the cache (part of input; Anthropic).",
    "reasoning_tokens": "Reasoning tokens (part of output), where the provider says them.",
    "total_tokens": "input + output. NULL when the source never said (not 0).",
}
_COMMON = {
    "session_id": "The session this row belongs to.",
    "fingerprint": "`v1:` + xxh3-128 of the row's content columns (those marked ✓).",
    "metadata": "What the source said that has no column of its own, as a JSON object.",
    "model": "The model that answered, as the source names it.",
    "llm_provider": "Who served the model (anthropic, openai, …).",
    "seq": "Order within the session (or the turn), from 0.",
    "started_at": "ISO-8601 UTC.",
    "completed_at": "ISO-8601 UTC.",
    "created_at": "ISO-8601 UTC.",
    "title": "A title, as the source gives it or from the first prompt.",
    "host": "The machine that wrote the row.",
    "importer_version": "The tracehouse version that wrote the row.",
    "source_provider": "The agent that wrote it: " + ", ".join(PROVIDERS) + ".",
    "run_id": "The `import_runs` row of the run that wrote it.",
    "updated_at": "ISO-8601 UTC.",
}

TABLE_DOCS = {
    "sessions": "One row per agent session (a transcript, a rollout, a Cursor composer).",
    "turns": "A user prompt and everything the agent did to answer it, with its token usage.",
    "messages": "Every message: prompts, answers, tool results, system and host notes.",
    "tool_calls": "Each tool the agent ran, with its parameters and result.",
    "message_sources": "What an answer cited: files, web pages, documents.",
    "watermarks": "How far each source file (unit) has been read; the next sync starts there.",
    "import_runs": "The run log: one row per sync, live flush, import, replay or copy.",
    "import_requests": "Idempotency keys already applied, with the response to replay.",
    "rejects": "Input that was refused, where it is and why; resolves when it reads cleanly.",
    "export_marks": "Where `export --since-last` last wrote each format, and when it started.",
    "api_tokens": "The bearer tokens `tracehouse serve` accepts, by name and scope; only hashes.",
    "session_history": "One row per import that changed a session (`sessions show --history`).",
    "session_tombstones": "Sessions deleted by `sessions delete`: later syncs leave them out"
    " until `sessions restore`.",
    "threads": "A session's linear histories: a rewind or an in-session fork starts a new one"
    " at the turn it went back to (derived from the turns' parent chain).",
    "session_aliases": "Labels sessions were shown under before a collision lengthened them:"
    " they keep resolving.",
}

COLUMN_DOCS: dict[str, dict[str, str]] = {
    "sessions": {
        "session_id": "Stable id: a hash of the provider and the source's session id.",
        "source_session_id": "The session's id in its source.",
        "fingerprint": "`v1:` + xxh3-128 of the content columns (✓) and where the source"
        " ends: unchanged, the session is skipped.",
        "label": "A short name for people: `cc-…`, `cx-…`, `cu-…` + the id's start, unique in"
        " the ledger: lengthened when another session's collides, the old one kept in"
        " `session_aliases`.",
        "created_at": "When the session started (ISO-8601 UTC).",
        "updated_at": "Its last activity (ISO-8601 UTC).",
        "model": "The session's main model.",
        "workspace_path": "The directory the agent worked in.",
        "project": "The workspace's last path part.",
        "git_branch": "The branch at the session's start, when recorded.",
        "git_commit": "The commit at the session's start, when recorded.",
        "git_remote": "The repository URL, when recorded.",
        "tool_version": "The agent's version (Claude Code 2.1.x, codex-cli 0.x, …).",
        "entrypoint": "How the agent was started (cli, claude-vscode, codex-tui, composer, …).",
        "is_subagent": "True for a subagent, a fork or a review spawned by another session.",
        "parent_session_id": "The session that spawned or forked this one.",
        "parent_message_id": "The parent's message that spawned it.",
        "spawn_tool_call_id": "The parent's tool call that spawned it.",
        "task_description": "What a subagent was asked to do.",
        "task_status": "How a subagent's task ended, when the source says.",
        "turn_count": "Rows in `turns`.",
        "message_count": "Rows in `messages`.",
        "tool_call_count": "Rows in `tool_calls`.",
        "source_path": "The file (or database) it was read from.",
        "first_imported_at": "When tracehouse first stored it.",
        "last_imported_at": "When its content last changed in the ledger.",
        "source_missing_at": "Set when its source file vanished; the rows are kept.",
        "parent_source_session_id": "`parent_session_id` as the source names it (its session"
        " id there): what `sessions.import` sends, kept when the parent is not in the ledger.",
        "parent_source_message_id": "`parent_message_id` by the source's message id.",
        "spawn_source_tool_call_id": "`spawn_tool_call_id` by the source's call id.",
        "label_base": "The label it was stored with: sessions whose labels collide share it,"
        " and each gets a longer label grown from it.",
        "source_read_at": "When its producer read it from the source (the item's"
        " `importedAtMs`); NULL when the producer did not say.",
    },
    "turns": {
        "turn_id": "Stable id: a hash of provider, session and the source's turn id.",
        "source_turn_id": "The turn's id in its source.",
        "parent_turn_id": "The turn this one follows, when the source chains them.",
        "status": "completed, aborted or error.",
        "response_message_id": "The message that answered the prompt.",
        "query_message_ids": "The prompt's messages, as a JSON list.",
    },
    "messages": {
        "message_id": "Stable id: a hash of provider, session and the source's message id.",
        "turn_id": "The turn it belongs to.",
        "source_message_id": "The message's id in its source.",
        "parent_message_id": "The message it answers or follows.",
        "role": "user, assistant, system or tool.",
        "message_type": "user, assistant, system, tool_result or host.",
        "content": "The text; past 1 MiB it is cut, with a marker giving the full size and hash.",
        "thinking": "The model's visible reasoning, when the source keeps it.",
        "meta": "Per-message details: usage, stop reason, what was capped.",
        "source_ref": "Where in the source it was read (file and line, or database key).",
        "context": "What the message was sent with, as JSON, when the producer gives it"
        " (`contextJson`).",
    },
    "tool_calls": {
        "tool_call_id": "Stable id: a hash of provider, session and the source's call id.",
        "turn_id": "The turn it was made in.",
        "message_id": "The assistant message that made it.",
        "source_tool_call_id": "The call's id in its source.",
        "tool_name": "Bash, Read, apply_patch, web_search, Task, …",
        "params": "The call's parameters, as a JSON object.",
        "result": (
            "What the model was given back as the call's answer, as text, whatever its status:"
            " for a failed call the error it was shown, the same text as `error` (cut past"
            " 1 MiB, with a marker). NULL: no answer came (a call cut off by an aborted turn)."
        ),
        "status": "pending, running, completed or failed.",
        "error": "Why it failed, when it did; also in `result` when the model was shown it.",
        "spawned_session_id": "The subagent session it started (filled in when both are here).",
        "tool_number": "The producer's own number for the call (`toolNumber`), when it gives one.",
        "spawned_source_session_id": "`spawned_session_id` by the source's session id.",
        "metadata": 'What the source records beside the result, as JSON: {"exit_code": 1} for'
        " a command whose exit status it wrote (Codex always, Claude Code when it failed).",
    },
    "message_sources": {
        "message_id": "The message that cited it.",
        "source_id": "A stable id of the cited thing within the message.",
        "source_type": "file, url, web_search, …",
        "title": "The cited thing's title.",
        "uri": "Its path or URL.",
        "content_preview": "The start of the cited text.",
        "chunk_number": "Which chunk of a document, when cited by chunk.",
        "created_at": "When the message that cites it was written.",
    },
    "watermarks": {
        "unit_key": "The unit: an absolute file path, or a database path.",
        "cursor": "Offset, size, mtime, inode and head/tail hashes of what was read (JSON).",
        "updated_at": "When the cursor last moved.",
        "run_id": "The run that moved it.",
        "state": "The parser's resume state for an append (JSON).",
    },
    "import_runs": {
        "mode": "backfill, live, import, migration or tail.",
        "started_at": "ISO-8601 UTC.",
        "finished_at": "NULL while running, or for a run that was killed.",
        "imported": "Sessions new to the ledger.",
        "upserted": "Sessions whose content changed.",
        "skipped": "Sessions whose fingerprint was unchanged.",
        "failed": "Sessions refused whole (see `rejects` and the run's error).",
        "rejects": "Lines or keys refused in this run.",
        "bytes_read": "Source bytes read.",
        "rows_written": "Rows inserted or replaced.",
        "retries": "Waits for a locked or busy store, a deadlock, an unreachable server.",
        "dedupe_hits": "Items skipped by fingerprint: nothing rewritten.",
        "tail_lag_ms": "Live flushes: the largest delay from a write to its commit.",
        "error": "Why the run failed, when it did.",
        "retry_reasons": 'What the retries waited for, as {"reason": count}.',
        "redactions": (
            'The secrets replaced by markers, as {"kind": count}: by the producer and, for a'
            " push, by the gateway."
        ),
        "tail_lag_p50_ms": "Live flushes: the median delay from a write to its commit.",
        "source": "Who sent its batches: the request's `source` (`tracehouse` for a sync).",
    },
    "import_requests": {
        "idempotency_key": "The request's key.",
        "request_hash": "What the key is bound to: the same key with other content is refused.",
        "response": "The response that a replay returns (JSON).",
    },
    "rejects": {
        "reject_id": "Stable id of the place and reason.",
        "unit_key": "The file (or database) it is in.",
        "location": "`line N (byte B)`, a database key, or `directory`.",
        "reason": "Why it was refused.",
        "raw_excerpt": "The start of the refused input.",
        "resolved_at": "Set when the location later read cleanly.",
    },
    "export_marks": {
        "target": "The export directory, as an absolute path on the machine that exported.",
        "format": "markdown, html, jsonl, otel or sessions-import.",
        "exported_at": "When that export started: the next one writes what changed since.",
        "sessions": "How many sessions that export wrote.",
    },
    "api_tokens": {
        "name": "Who or what the token was made for (`serve tokens add NAME`).",
        "scope": "push (send sessions.import) or read (list, show, search).",
        "token_hash": "sha256 of the token, hex; the token itself is shown once and never kept.",
        "machine": "A push token's machine: the only one it writes as (its sessions, cursors,"
        " runs); NULL for a read token.",
        "created_at": "When it was made.",
        "last_used_at": "When a request last carried it (to the minute).",
    },
    "session_history": {
        "history_id": "A hash of the session, the run and the new fingerprint.",
        "run_id": "The run that imported it (`tracehouse runs`).",
        "status": "imported (new to the ledger) or upserted (changed).",
        "fingerprint_before": "The session's fingerprint before; empty when it was new.",
        "fingerprint_after": "Its fingerprint after.",
        "rows_written": "Rows that import wrote for it.",
        "recorded_at": "When.",
    },
    "threads": {
        "thread_id": "A hash of the session and the thread's first turn.",
        "seq": "The order the session's threads started in; 0 is the first.",
        "parent_thread_id": "The thread it forked from.",
        "fork_turn_id": "The turn of that thread it continues from.",
        "first_turn_id": "Its first turn.",
        "last_turn_id": "Its last turn so far.",
        "turn_count": "How many turns it holds.",
        "is_active": "True for the thread with the session's latest turn: `sessions show`"
        " shows the path to it, with the other branches marked.",
    },
    "session_aliases": {
        "alias": "A label the session had before.",
        "session_id": "The session it names.",
        "created_at": "When the label was lengthened.",
    },
    "session_tombstones": {
        "session_id": "The deleted session's id (its rows are gone).",
        "source_provider": "The tool it came from.",
        "source_session_id": "Its id in its source.",
        "label": "Its label, which `sessions restore` takes.",
        "source_path": "The file it came from: restoring forgets its cursor, so the next sync"
        " reads it again.",
        "deleted_at": "When it was deleted.",
    },
}


def describe(table: Table, column: Column) -> str:
    own = COLUMN_DOCS.get(table.name, {})
    text = own.get(column.name) or _TOKENS.get(column.name) or _COMMON.get(column.name)
    if text is None:
        raise KeyError(f"{table.name}.{column.name} has no description in schema_doc.py")
    if column.choices and "," not in text:
        text += f" One of {', '.join(column.choices)}."
    if column.references:
        table_name, _, key = column.references.partition(".")
        text += f" → `{table_name}.{key}`."
    return text


def render() -> str:
    lines = [
        "# The ledger's tables",
        "",
        "Generated from `src/tracehouse/model/tables.py` by"
        " `uv run python -m tracehouse.model.schema_doc > docs/schema.md`;"
        " a test fails when it is out of date.",
        "",
        "The same tables in SQLite and PostgreSQL. Types: text, int (64-bit), bool, json (JSON"
        " text in SQLite, `json` in PostgreSQL). Times are ISO-8601 UTC text. Ids are stable"
        " hashes, so the same session gives the same ids on every machine. **key**: part of the"
        " primary key; **req**: never NULL; **fp**: covered by the row's fingerprint (a change"
        " there is a change of content). Columns are only ever added, never renamed. **→**: the"
        " row this column points at, declared as a foreign key in SQLite (for tools such as"
        " Datasette) and never enforced. A token count or time the agent did not record is NULL.",
    ]
    for table in ALL_TABLES:
        lines += ["", f"## `{table.name}`", "", TABLE_DOCS[table.name], ""]
        lines += ["| column | type | key | req | fp | meaning |", "|---|---|---|---|---|---|"]
        fingerprinted = "fingerprint" in table.names
        for column in table.columns:
            marks = (
                "✓" if column.name in table.primary_key else "",
                "✓" if column.required else "",
                "✓" if fingerprinted and column.content and column.name != "fingerprint" else "",
            )
            lines.append(
                f"| `{column.name}` | {column.kind.value} | {' | '.join(marks)}"
                f" | {describe(table, column)} |"
            )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(render(), end="")
