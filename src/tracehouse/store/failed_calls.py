"""One meaning for a failed call (SQLite m022, PostgreSQL 0020): `result` holds what the model
was given back as the call's answer, whatever its status, and `error` why a failed call failed:
where the agent gave the model an error as the answer, both hold that text. A call that got no
answer at all (a Codex call cut off by an aborted turn) has an `error` and no `result`.

Claude Code and Codex were written so. OpenCode, Gemini CLI, Cursor and the parser kit's
sources that report failures (Qwen Code, Pi, Kimi CLI, Copilot CLI, Crush) put such an answer
in `error` alone, so whoever read `result` got nothing for those agents. A ledger written before
gets their results from the errors it holds, without reading a source again, each row with the
fingerprint a fresh import gives it (`store verify` recomputes them)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from tracehouse.model.rows import row_fingerprint
from tracehouse.model.tables import TOOL_CALLS

OUTPUT_IN_ERROR = ("opencode", "gemini-cli", "cursor", "qwen-code", "pi", "kimi-cli",
                   "copilot-cli", "crush")  # fmt: skip
WHERE = (
    "status = 'failed' AND result IS NULL AND error IS NOT NULL AND session_id IN (SELECT"
    " session_id FROM sessions WHERE source_provider IN ("
    + ", ".join(f"'{p}'" for p in OUTPUT_IN_ERROR)
    + "))"
)


def fill_results(
    query: Callable[[str], Sequence[Sequence[Any]]],
    execute_many: Callable[[str, list[tuple[Any, ...]]], object],
    mark: str,
) -> list[str]:
    """The failed calls' results from their errors, through a backend's own calls; returns the
    ids of the rows changed."""
    names = TOOL_CALLS.names
    updates = []
    for values in query(f"SELECT {', '.join(names)} FROM tool_calls WHERE {WHERE}"):
        row = dict(zip(names, values, strict=True))
        row["result"] = row["error"]
        updates.append((row["result"], row_fingerprint(TOOL_CALLS, row), row["tool_call_id"]))
    if updates:
        execute_many(f"UPDATE tool_calls SET result = {mark}, fingerprint = {mark}"
                     f" WHERE tool_call_id = {mark}", updates)  # fmt: skip
    return [key for _, _, key in updates]
