"""The shapes today's agent releases write, from logs they wrote themselves against the
conformance suite's scripted model (`python -m conformance run --keep`), kept under
`tests/data/<agent>/released` so a fresh clone checks them without npm:

- Claude Code 2.1.328: every `-p` prompt enqueued and dequeued 5 ms later (none waited); no
  `ai-title`, so the first prompt is the title; a subagent whose `.meta.json` says `finished`.
- Codex 0.169: prompts as `response_item` messages with a `user` provenance and an
  `item_completed` `UserMessage`, lines with an `ordinal`; no thread name, so the first prompt.
- Gemini CLI 0.61, resumed twice: each resume appends a header and a `$set.messages` snapshot
  (thin copies, `<id>_response` entries, times reset); a `<session_context>` preamble.
- Copilot CLI 1.0.102, resumed three times: a `session.usage_record` per request (its counts
  under `usage`), and a `session.shutdown` per run whose totals (also under
  `accountingSnapshot`) count the earlier runs too; `workspace.yaml` names the session after the
  first prompt. (Its system prompt is left out of the copy.)
- Qwen Code 0.24.4: an `attribution_snapshot` per prompt; a subagent's own transcript under
  `subagents/<session>/agent-<id>.jsonl` with a `.meta.json`, its model calls also in the
  parent's telemetry.
- Cline CLI 3.0.65: `~/.cline/data/sessions/<id>/`, a manifest and an Anthropic-shaped
  `messages.json`, a subagent's `agent_<id>.messages.json` beside it; prompts wrapped in
  `<user_input mode="act">`. (System prompts left out of the copy.)
- Kimi CLI 1.52 (the original CLI its last PyPI release still ships, `python -m kimi_cli.cli`):
  a subagent's events mirrored in the parent's wire log as `SubagentEvent`s naming the call, its
  own wire log and `meta.json` under `subagents/<agent id>/`, and Kimi's follow-up when its
  answer was short. (The context files are left out of the copy: the wire logs are read.)
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from tests.conftest import DATA
from tracehouse.cli.app import app
from tracehouse.store import open_store

PROMPTS = ["Run the shell step and tell me what it printed.", "Write the notes file.",
           "Read the notes file back to me."]  # fmt: skip


def imported(tmp_path: Path, agent: str) -> tuple[list[dict], list[dict], list[dict], list[dict]]:  # type: ignore[type-arg]
    ledger = tmp_path / "ledger.db"
    done = CliRunner().invoke(app, ["sync", "backfill", "--home", str(DATA / agent / "released"),
                                    "--store", str(ledger), "--json"])  # fmt: skip
    assert done.exit_code == 0 and orjson.loads(done.output)["rejects"] == [], done.output
    store = open_store(ledger, create=False)
    try:
        return (store.query("SELECT * FROM sessions ORDER BY is_subagent"),
                store.query("SELECT * FROM turns ORDER BY session_id, seq"),
                store.query("SELECT * FROM messages ORDER BY session_id, seq"),
                store.query("SELECT * FROM tool_calls ORDER BY session_id, seq"))  # fmt: skip
    finally:
        store.close()


def prompts(messages: list[dict]) -> list[str]:  # type: ignore[type-arg]
    return [m["content"] for m in messages if m["message_type"] == "user"]


def test_claude_code_2_1_328(tmp_path: Path) -> None:
    sessions, _, messages, calls = imported(tmp_path, "claude")
    main, child = sessions
    assert main["title"] == PROMPTS[0]  # no ai-title: the first prompt
    assert not any("queued" in (m["meta"] or "") for m in messages)
    assert prompts([m for m in messages if m["session_id"] == main["session_id"]]) == [
        *PROMPTS, "Ask a helper to check the notes file."]  # fmt: skip
    assert child["parent_session_id"] == main["session_id"]
    assert child["task_status"] == "completed"  # the sidecar's `finished: true`
    spawn = [c for c in calls if c["tool_name"] == "Agent"]
    assert [c["spawned_session_id"] for c in spawn] == [child["session_id"]]
    assert all(c["status"] == "completed" for c in calls)


def test_codex_0_169(tmp_path: Path) -> None:
    (session,), turns, messages, calls = imported(tmp_path, "codex")
    assert prompts(messages) == PROMPTS  # not `system`
    assert session["title"] == PROMPTS[0]
    assert len(turns) == 3 and [c["tool_name"] for c in calls] == [
        "exec_command", "apply_patch", "exec_command"]  # fmt: skip
    assert all(c["status"] == "completed" for c in calls)
    assert session["total_tokens"] == sum(t["total_tokens"] for t in turns) == 23_715


def test_gemini_cli_0_61_resumed(tmp_path: Path) -> None:
    (session,), turns, messages, calls = imported(tmp_path, "gemini")
    assert prompts(messages) == PROMPTS  # the preamble is not a prompt, nor a tool's answer
    assert session["title"] == PROMPTS[0]
    assert messages[0]["role"] == "system" and messages[0]["content"].startswith(
        "<session_context>")  # fmt: skip
    assert not any(m["role"] == "user" and not m["content"] for m in messages)
    assert len(turns) == 3  # one per prompt
    assert [c["tool_name"] for c in calls] == ["run_shell_command", "write_file", "read_file"]
    assert all(c["status"] == "completed" and c["result"] for c in calls)
    # the snapshots' thin copies lose nothing: each reply keeps its model, tokens and time
    replies = [m for m in messages if m["role"] == "assistant"]
    assert all(m["model"] == "gemini-2.5-flash" for m in replies)
    first_resume = turns[1]["started_at"]
    assert all(
        m["created_at"] < first_resume for m in messages if m["turn_id"] == turns[0]["turn_id"]
    )
    assert session["input_tokens"] == 23_184 and session["output_tokens"] == 531
    assert session["total_tokens"] == session["input_tokens"] + session["output_tokens"]


def test_copilot_cli_1_0_102_resumed(tmp_path: Path) -> None:
    (session,), turns, messages, calls = imported(tmp_path, "copilot")
    assert prompts(messages) == [*PROMPTS, "Run the failing step."]
    assert session["title"] == PROMPTS[0] and session["tool_version"] == "1.0.102"
    assert [c["tool_name"] for c in calls] == ["bash", "bash", "view", "bash"]
    assert all(c["status"] == "completed" for c in calls)
    # each run's requests in its own turn, not its shutdown's running total
    assert [t["input_tokens"] for t in turns] == [3328, 7728, 12128, 16528]
    assert session["input_tokens"] == 39_712 and session["output_tokens"] == 892
    assert session["total_tokens"] == sum(t["total_tokens"] for t in turns)


def test_qwen_code_0_24_4(tmp_path: Path) -> None:
    (main, child), turns, messages, calls = imported(tmp_path, "qwen")
    assert prompts([m for m in messages if m["session_id"] == main["session_id"]]) == [
        *PROMPTS, "Run the failing step.", "Ask a helper to check the notes file."]  # fmt: skip
    # the subagent's transcript of its own (0.24), linked both ways by the call's id
    spawn = next(c for c in calls if c["tool_name"] == "agent")
    assert child["parent_session_id"] == main["session_id"]
    assert spawn["spawned_session_id"] == child["session_id"]
    assert child["task_status"] == "completed" and child["task_description"] == "Check the notes"
    # its model call is counted once, in its own session, not also in the parent's turn
    main_turns = [t for t in turns if t["session_id"] == main["session_id"]]
    assert main["total_tokens"] == sum(t["total_tokens"] for t in main_turns) == 63_108
    assert child["total_tokens"] == 11_252
    # the attribution snapshot: the file the agent wrote, and the prompts since the last commit
    attribution = orjson.loads(main["metadata"])["attribution"]
    assert attribution["promptCount"] == 5
    (state,) = attribution["fileStates"].values()
    assert state["aiCreated"] is True and state["aiContribution"] == 56
    assert "unknown_records" not in orjson.loads(main["metadata"])


def test_cline_cli_3_0_65(tmp_path: Path) -> None:
    sessions, _, messages, calls = imported(tmp_path, "cline")
    failing, lead, child = sorted(sessions, key=lambda s: (s["is_subagent"], s["created_at"]))
    # the prompt as typed, not as wrapped for the model with the mode it was typed in
    assert [failing["title"], lead["title"]] == [
        "Run the failing step.",
        "Ask a helper to check the notes file.",
    ]
    assert (
        orjson.loads(
            next(
                m["metadata"]
                for m in messages
                if m["message_type"] == "user" and m["session_id"] == lead["session_id"]
            )
        )["mode"]
        == "act"
    )
    assert lead["tool_version"] == "3.0.65" and lead["workspace_path"] == child["workspace_path"]
    ls = next(c for c in calls if c["session_id"] == failing["session_id"])
    assert ls["status"] == "failed" and "No such file or directory" in ls["result"]
    assert ls["params"] == '{"commands":["ls /conformance-missing-path"]}'
    # the subagent: linked to the spawn_agent call whose task it was given
    spawn = next(c for c in calls if c["tool_name"] == "spawn_agent")
    assert spawn["spawned_session_id"] == child["session_id"]
    assert child["parent_session_id"] == lead["session_id"] and child["task_status"] == "completed"
    # metrics.inputTokens holds the cache reads; no reasoning count: NULL, not 0
    assert failing["input_tokens"] == 7714 + 8814 and failing["cached_input_tokens"] == 703 + 803
    assert failing["reasoning_tokens"] is None


def test_kimi_cli_1_52_subagent(tmp_path: Path) -> None:
    (main, child), _, messages, calls = imported(tmp_path, "kimi")
    spawn = next(c for c in calls if c["tool_name"] == "Agent")
    # the parent's SubagentEvent names the call and the agent: linked both ways
    assert spawn["spawned_session_id"] == child["session_id"]
    assert child["parent_session_id"] == main["session_id"]
    assert child["spawn_tool_call_id"] == spawn["tool_call_id"]
    assert child["task_status"] == "completed" and child["task_description"] == "Check the notes"
    # Kimi's follow-up to a short answer is the host's, not a second task
    asked = [m["message_type"] for m in messages
             if m["session_id"] == child["session_id"] and m["role"] != "assistant"]  # fmt: skip
    assert asked == ["user", "host"]
    assert child["turn_count"] == 1 and child["total_tokens"] == 11_252 + 12_375
    assert "unknown_records" not in orjson.loads(main["metadata"] or "{}")
    assert main["reasoning_tokens"] is None  # no field counts it: not recorded, never 0


@pytest.mark.parametrize("agent", ["claude", "codex", "gemini", "copilot", "qwen", "cline", "kimi"])
def test_a_second_import_changes_nothing(tmp_path: Path, agent: str) -> None:
    ledger = tmp_path / "ledger.db"
    args = ["sync", "backfill", "--home", str(DATA / agent / "released"), "--store", str(ledger),
            "--json"]  # fmt: skip
    CliRunner().invoke(app, args)
    again = orjson.loads(CliRunner().invoke(app, args).output)
    assert again["sessions"]["imported"] == again["sessions"]["upserted"] == 0, again
