"""What the agent wrote, imported through the ordinary sync path, against the ground truth the
scripted model recorded: the session, each prompt and answer, each tool call with its result,
tokens per turn and per session in the ledger's convention, models, times, and no rejects.

A difference names what differs, what the truth says, what the ledger holds, and the raw record
each came from: the model's response as it was sent, the agent's line as the ledger cites it.
"""

from __future__ import annotations

import itertools
import json
import sqlite3
import subprocess
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from conformance.agents import Agent
from conformance.drive import Drive
from conformance.scenario import CLOSING, PROMPTS, TASK, prompt_of
from conformance.servers.base import Exchange
from tracehouse.model.tables import TOKEN_COLUMNS

TOKENS = TOKEN_COLUMNS


@dataclass
class Difference:
    what: str
    expected: Any
    got: Any
    raw: str = ""  # the records behind both sides

    def __str__(self) -> str:
        lines = [f"✗ {self.what}", f"    truth:  {self.expected!r}", f"    ledger: {self.got!r}"]
        if self.raw:
            lines.append(f"    raw:    {self.raw[:1200]}")
        return "\n".join(lines)


def import_home(home: Path, ledger: Path) -> dict[str, Any]:
    """`tracehouse sync backfill --home HOME`: the path every user's import takes."""
    done = subprocess.run(
        [sys.executable, "-m", "tracehouse.cli.app", "sync", "backfill", "--home", str(home),
         "--store", str(ledger), "--json"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    if done.returncode not in (0, 1):
        raise RuntimeError(f"sync backfill failed ({done.returncode}): {done.stderr[-2000:]}")
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def compare(run: Drive, ledger: Path) -> list[Difference]:
    report = import_home(run.home, ledger)
    found: list[Difference] = []
    if report.get("rejects"):
        found.append(Difference("rejects", [], report["rejects"]))
    conn = sqlite3.connect(f"file:{ledger}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    try:
        if run.agent.resumes:
            found += _compare(run, conn)
        else:  # each prompt its own session, compared with what the model was asked for it
            for one in run.runs:
                view = replace(run, prompts=(one.prompt,), session_id=one.session_id,
                               runs=[one])  # fmt: skip
                found += [replace(d, what=f"{one.prompt!r}: {d.what}")
                          for d in _compare(view, conn)]  # fmt: skip
    finally:
        conn.close()
    return found


def _rows(conn: sqlite3.Connection, sql: str, *args: Any) -> list[dict[str, Any]]:
    return [dict(r) for r in conn.execute(sql, args)]


def _compare(run: Drive, conn: sqlite3.Connection) -> list[Difference]:
    found: list[Difference] = []
    sessions = _rows(conn, "SELECT * FROM sessions WHERE NOT is_subagent")
    if not run.agent.resumes:
        sessions = [s for s in sessions if s["source_session_id"] == run.session_id]
    if len(sessions) != 1:
        return [Difference("main sessions", 1, [s["source_session_id"] for s in sessions])]
    (session,) = sessions
    sid = session["session_id"]
    # The main conversation's calls: a subagent's carry none of the scenario's prompts.
    prompted = list(run.prompts)
    first = PROMPTS.index(prompted[0])  # where the compared prompts start in the scenario
    wanted = range(first, first + len(prompted))
    # an agent that edits by text offers no tools: each of its calls that carries a prompt
    in_talk = run.agent.written is not None
    asked = [e for e in run.exchanges if e.request is not None and (e.conversation or in_talk)
             and prompt_of(e.request) in wanted]  # fmt: skip
    by_prompt: dict[int, list[Exchange]] = {}
    for exchange in asked:
        assert exchange.request is not None
        index = prompt_of(exchange.request)
        if index is not None:
            by_prompt.setdefault(index, []).append(exchange)

    messages = _rows(conn, "SELECT * FROM messages WHERE session_id = ? ORDER BY seq", sid)
    prompts = [m["content"] for m in messages if m["message_type"] == "user"]
    if prompts != prompted:
        found.append(Difference("prompts (user messages, in order)", prompted, prompts,
                                _refs(m for m in messages if m["role"] == "user")))  # fmt: skip
    waited = [m["content"] for m in messages
              if m["message_type"] == "user" and "queued" in (m["meta"] or "")]  # fmt: skip
    if waited:
        found.append(Difference("prompts flagged queued (none waited)", [], waited))
    said = [m["content"] for m in messages if m["role"] == "assistant" and m["content"]]
    answers = [e.answer.text for e in asked if e.answer and e.answer.text]
    if said != answers:
        found.append(Difference("answers (assistant text, in order)", answers, said))

    calls = _rows(conn, "SELECT * FROM tool_calls WHERE session_id = ? ORDER BY seq", sid)
    made = [c for e in asked for c in ((*e.answer.calls, *e.answer.edits) if e.answer else ())]
    got = [(c["tool_name"], _params(c["params"])) for c in calls]
    if got != [(c.tool, c.args) for c in made]:
        found.append(Difference("tool calls (name, params)", [(c.tool, c.args) for c in made],
                                got))  # fmt: skip
    for call, (sent, failed) in zip(calls, _results_sent(asked), strict=False):
        if not _same_result(call["result"], sent):
            found.append(Difference(f"result of {call['tool_name']}", sent, call["result"]))
        # the status the agent gave the model; an API without the flag says it in the output
        wanted = {True: {"failed"}, False: {"completed"}}.get(failed, {"completed", "failed"})  # type: ignore[arg-type]
        if call["status"] not in wanted:
            found.append(Difference(f"status of {call['tool_name']}", sorted(wanted),
                                    call["status"], str(call["result"])))  # fmt: skip

    turns = _rows(conn, "SELECT * FROM turns WHERE session_id = ? ORDER BY seq", sid)
    if len(turns) != len(prompted):
        found.append(Difference("turns (one per prompt)", len(prompted), len(turns)))
    logged = []  # each turn's truth as the agent could log it
    for index, turn in enumerate(turns[: len(prompted)]):
        spent = by_prompt.get(first + index, [])
        truth = _as_logged(run.agent, _sum([e.usage.ledger() for e in spent if e.usage]))
        logged.append(truth)
        held = _held(turn, truth, run.agent)
        if held != truth:
            raw = "; ".join(json.dumps(_usage_sent(e)) for e in spent)
            found.append(Difference(f"turn {index + 1} tokens", truth, held, raw))
        model = spent[0].request.model if spent and spent[0].request else None
        if model and run.agent.logged_model:
            model = run.agent.logged_model  # what the agent calls it (Aider: litellm's route)
        if not run.agent.logs_model:
            model = None  # "not recorded": never a guess from today's configuration
        if turn["model"] != model:
            found.append(Difference(f"turn {index + 1} model", model, turn["model"]))
        window = run.runs[index] if index < len(run.runs) else None
        # an agent that logs whole seconds (Aider) starts a run within the second it began
        begun = window.started[:19] + ".000Z" if window and run.agent.logs_seconds else None
        if window and not ((begun or window.started) <= (turn["started_at"] or "")
                           <= window.ended):  # fmt: skip
            span = (window.started, window.ended)
            found.append(Difference(f"turn {index + 1} start within its run", span,
                                    turn["started_at"]))  # fmt: skip
    total = _sum(logged)
    held = _held(session, total, run.agent)
    if held != total:
        found.append(Difference("session tokens", total, held))
    unknown = json.loads(session["metadata"] or "{}").get("unknown_records")
    if unknown:
        found.append(Difference("records tracehouse does not know", None, str(unknown)[:600]))
    if session["title"] is None:
        found.append(Difference("title", "the agent's title or the first prompt", None))
    closing = CLOSING[first + len(prompted) - 1]
    # an agent that edits by text gets no result back: its edit's answer is its last
    if run.agent.written is None and closing not in said:
        found.append(Difference("the last answer", closing, said[-1:] or None))
    if any(c.tool in SPAWNING for c in made):
        found += _subagent(conn, session, calls)
    return found


# the calls that give a subagent its task
SPAWNING = frozenset({"Agent", "Task", "agent", "task", "spawn_agent"})


def _subagent(
    conn: sqlite3.Connection, session: dict[str, Any], calls: list[dict[str, Any]]
) -> list[Difference]:
    """The task given to a subagent: its session, linked both ways, finished."""
    found = []
    children = _rows(conn, "SELECT * FROM sessions WHERE is_subagent")
    spawn = next((c for c in calls if c["tool_name"] in SPAWNING), None)
    if len(children) != 1 or spawn is None:
        return [Difference("subagent sessions", 1, len(children))]
    (child,) = children
    if child["parent_session_id"] != session["session_id"]:
        found.append(Difference("subagent's parent", session["session_id"],
                                child["parent_session_id"]))  # fmt: skip
    if spawn["spawned_session_id"] != child["session_id"]:
        found.append(Difference("spawning call's child", child["session_id"],
                                spawn["spawned_session_id"]))  # fmt: skip
    if child["task_status"] != "completed":
        found.append(Difference("subagent's task_status", "completed", child["task_status"]))
    asked = _rows(conn, "SELECT content FROM messages WHERE session_id = ? AND"
                  " message_type = 'user'", child["session_id"])  # fmt: skip
    if [m["content"] for m in asked] != [TASK]:
        found.append(Difference("subagent's prompt", [TASK], [m["content"] for m in asked]))
    return found


def _results_sent(asked: list[Exchange]) -> list[tuple[str, bool | None]]:
    """What the agent sent back for each call, and whether it said the call failed: the newest
    result of the request after the answer that made it."""
    sent = []
    for made, after in itertools.pairwise(asked):
        if made.answer and made.answer.calls and after.request and after.request.results:
            flags = after.request.failed or [None]
            sent.append((after.request.results[-1], flags[-1]))
    return sent


def _params(text: str | None) -> Any:
    return json.loads(text) if text else None


def _same_result(held: str | None, sent: str) -> bool:
    """The ledger's result is what the agent sent back to the model, or holds it (an agent may
    wrap a result for the model: `Output: …`, a JSON envelope, whose texts are then compared)."""
    if held is None:
        return False
    if held.strip() in sent or sent.strip() in held:
        return True
    try:
        envelope = json.loads(sent)
    except ValueError:
        return False
    return any(held.strip() in text or text.strip() in held for text in _texts(envelope) if text)


def _texts(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    return [t for v in value for t in _texts(v)] if isinstance(value, list) else []


def _held(row: dict[str, Any], truth: dict[str, int], agent: Agent) -> dict[str, Any]:
    """A row's counts beside the truth's: NULL reads as 0 (a part the API does not report), but
    for reasoning, which an agent that does not log it leaves NULL ("not recorded", within the
    output all the same): that is taken as the truth's. A count the agent does not log at all
    (`Agent.unlogged`) must be NULL."""
    held: dict[str, Any] = {c: row[c] or 0 for c in TOKENS}
    if row["reasoning_tokens"] is None:
        held["reasoning_tokens"] = truth["reasoning_tokens"]
    for column in agent.unlogged:
        held[column] = truth[column] if row[column] is None else f"{row[column]}, not logged"
    return held


def _as_logged(agent: Agent, truth: dict[str, int]) -> dict[str, int]:
    """The truth as an agent that rounds its counts logs it (Aider's `1.1k`)."""
    if agent.rounds is None:
        return truth
    rounded = {**truth, "input_tokens": agent.rounds(truth["input_tokens"]),
               "output_tokens": agent.rounds(truth["output_tokens"])}  # fmt: skip
    rounded["total_tokens"] = rounded["input_tokens"] + rounded["output_tokens"]
    return rounded


def _sum(counts: list[dict[str, int]]) -> dict[str, int]:
    """Summed counts; a part a provider does not report (0 here) may be NULL in the ledger, so
    both sides compare NULL as 0."""
    return {k: sum(c[k] for c in counts) for k in TOKENS}


def _usage_sent(exchange: Exchange) -> Any:
    u = exchange.usage
    return {"response": exchange.response_id, "fresh": u.fresh, "cache_read": u.cache_read,
            "cache_write": u.cache_write, "visible": u.visible,
            "reasoning": u.reasoning} if u else None  # fmt: skip


def _refs(messages: Any) -> str:
    return "; ".join(f"{m['source_ref']}: {str(m['content'])[:80]!r}" for m in messages)
