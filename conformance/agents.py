"""The agents the suite drives: where npm put each one, how it is pointed at the scripted model
in a throwaway home, how it is run once and resumed, and its own names for the scenario's
steps (a shell command, a file write, a file read).

Every agent runs offline: its model is the scripted one on 127.0.0.1, and any other address
goes to a proxy on a closed local port. Nothing is written outside the throwaway home.
"""

from __future__ import annotations

import json
import os
import platform
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from conformance.scenario import TASK
from conformance.servers.anthropic import Anthropic
from conformance.servers.base import Call, Dialect
from conformance.servers.chat import Chat
from conformance.servers.gemini import Gemini
from conformance.servers.responses import Responses

NOTES = "notes.txt"
NOTE_TEXT = "conformance notes: the ledger equals what the agent did\n"
MARKER = "conformance-shell-ok"
MISSING = "ls /conformance-missing-path"  # a command that fails: exit status 2

_CLOSED = "http://127.0.0.1:9"  # nothing listens: any address but the model's fails at once


def _platform() -> str:
    machine = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64"}.get(
        platform.machine().lower(), platform.machine().lower()
    )
    return f"{platform.system().lower()}-{machine}"


def base_env(home: Path) -> dict[str, str]:
    return {
        "HOME": str(home),
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "NO_COLOR": "1",
        "HTTPS_PROXY": _CLOSED,
        "HTTP_PROXY": _CLOSED,
        "NO_PROXY": "127.0.0.1,localhost",
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
    }


@dataclass(frozen=True)
class Agent:
    """One agent CLI as the suite drives it."""

    name: str  # tracehouse's source name
    package: str  # the npm package a release is published as
    dialect: Callable[[], Dialect]
    prefix: str  # what the agent puts before the API's paths
    model: str
    binary: Callable[[Path], Path]  # node_modules → the program
    setup: Callable[[Path, str], dict[str, str]]  # (home, model url) → environment
    first: Callable[[Path, str], list[str]]  # (program, prompt) → argv
    resume: Callable[[Path, str, str], list[str]]  # (program, session id, prompt) → argv
    session_id: Callable[[Path, str], str]  # (home, first run's stdout) → the session's id
    steps: Callable[[Path], tuple[Call, ...]]  # work dir → the scenario's calls (scenario.py)
    pinned_as: str = ""  # the package npm/package.json pins, where not `package` itself
    # whether a session can be resumed headless; where not, each prompt is a session of its own
    resumes: bool = True


# -- Claude Code ------------------------------------------------------------------------------


def _claude_binary(modules: Path) -> Path:
    # The platform package's native program: the wrapper's `bin` is a placeholder that an
    # install script replaces, and no install script runs.
    return modules / "@anthropic-ai" / f"claude-code-{_platform()}" / "claude"


def _claude_setup(home: Path, url: str) -> dict[str, str]:
    return {**base_env(home), "ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "sk-ant-scripted",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1", "DISABLE_ERROR_REPORTING": "1"}  # fmt: skip


_CLAUDE_FLAGS = ["--model", "claude-sonnet-4-5", "--output-format", "json",
                 "--allowedTools", "Bash,Write,Read,Agent"]  # fmt: skip


def _claude_steps(work: Path) -> tuple[Call, ...]:
    notes = str(work / NOTES)
    task = {"description": "Check the notes", "prompt": TASK, "subagent_type": "general-purpose",
            "run_in_background": False}  # fmt: skip
    return (
        Call("Bash", {"command": f"echo {MARKER}", "description": "Print the marker"}),
        Call("Write", {"file_path": notes, "content": NOTE_TEXT}),
        Call("Read", {"file_path": notes}),
        Call("Bash", {"command": MISSING, "description": "List a missing path"}),
        Call("Agent", task),
    )


CLAUDE_CODE = Agent(
    name="claude-code",
    package="@anthropic-ai/claude-code",
    dialect=Anthropic,
    prefix="",
    model="claude-sonnet-4-5",
    binary=_claude_binary,
    setup=_claude_setup,
    first=lambda program, prompt: [str(program), "-p", prompt, *_CLAUDE_FLAGS],
    resume=lambda program, sid, prompt: [
        str(program),
        "--resume",
        sid,
        "-p",
        prompt,
        *_CLAUDE_FLAGS,
    ],
    session_id=lambda home, stdout: str(json.loads(stdout)["session_id"]),
    steps=_claude_steps,
)


# -- Codex CLI --------------------------------------------------------------------------------

_CODEX_TARGETS = {"linux-x64": "x86_64-unknown-linux-musl",
                  "linux-arm64": "aarch64-unknown-linux-musl"}  # fmt: skip


def _codex_binary(modules: Path) -> Path:
    target = _CODEX_TARGETS.get(_platform(), "")
    return modules / "@openai" / f"codex-{_platform()}" / "vendor" / target / "bin" / "codex"


def _codex_setup(home: Path, url: str) -> dict[str, str]:
    config = home / ".codex"
    config.mkdir(parents=True, exist_ok=True)
    (config / "config.toml").write_text(
        'model = "gpt-5.5"\nmodel_provider = "scripted"\n\n'
        '[model_providers.scripted]\nname = "scripted"\n'
        f'base_url = "{url}"\nenv_key = "SCRIPTED_API_KEY"\nwire_api = "responses"\n'
    )
    return {**base_env(home), "CODEX_HOME": str(config), "SCRIPTED_API_KEY": "sk-scripted"}


_CODEX_FLAGS = ["--skip-git-repo-check", "--json", "--dangerously-bypass-approvals-and-sandbox"]


def _codex_session(home: Path, stdout: str) -> str:
    for line in stdout.splitlines():
        if '"thread_id"' in line:
            return str(json.loads(line)["thread_id"])
    raise ValueError("codex exec --json named no thread")


def _codex_steps(work: Path) -> tuple[Call, ...]:
    patch = f"*** Begin Patch\n*** Add File: {NOTES}\n+{NOTE_TEXT.rstrip()}\n*** End Patch\n"
    return (
        Call("exec_command", {"cmd": f"echo {MARKER}"}),
        Call("apply_patch", {"input": patch}),
        Call("exec_command", {"cmd": f"cat {NOTES}"}),
        Call("exec_command", {"cmd": MISSING}),
    )


CODEX = Agent(
    name="codex",
    package="@openai/codex",
    dialect=Responses,
    prefix="/v1",
    model="gpt-5.5",
    binary=_codex_binary,
    setup=_codex_setup,
    first=lambda program, prompt: [str(program), "exec", *_CODEX_FLAGS, prompt],
    resume=lambda program, sid, prompt: [
        str(program),
        "exec",
        *_CODEX_FLAGS,
        "resume",
        sid,
        prompt,
    ],
    session_id=_codex_session,
    steps=_codex_steps,
)


# -- Gemini CLI -------------------------------------------------------------------------------


def _gemini_setup(home: Path, url: str) -> dict[str, str]:
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}},
                                    "telemetry": {"enabled": False},
                                    "general": {"disableAutoUpdate": True}}))  # fmt: skip
    return {**base_env(home), "GEMINI_API_KEY": "scripted", "GOOGLE_GEMINI_BASE_URL": url,
            "GEMINI_CLI_TRUST_WORKSPACE": "true", "GEMINI_CLI_NO_RELAUNCH": "1"}  # fmt: skip


_GEMINI_FLAGS = ["--yolo", "-m", "gemini-2.5-flash", "--output-format", "json"]


def _gemini_session(home: Path, stdout: str) -> str:
    chats = sorted((home / ".gemini" / "tmp").glob("*/chats/session-*.json*"))
    header = chats[-1].read_text(encoding="utf-8").split("\n", 1)[0]
    return str(json.loads(header)["sessionId"])


def _gemini_steps(work: Path) -> tuple[Call, ...]:
    notes = str(work / NOTES)
    return (
        Call("run_shell_command", {"command": f"echo {MARKER}", "description": "Print it"}),
        Call("write_file", {"file_path": notes, "content": NOTE_TEXT}),
        Call("read_file", {"file_path": notes}),
        Call("run_shell_command", {"command": MISSING, "description": "List it"}),
    )


GEMINI_CLI = Agent(
    name="gemini-cli",
    package="@google/gemini-cli",
    dialect=Gemini,
    prefix="",
    model="gemini-2.5-flash",
    binary=lambda modules: modules / "@google" / "gemini-cli" / "bundle" / "gemini.js",
    setup=_gemini_setup,
    first=lambda program, prompt: ["node", str(program), "-p", prompt, *_GEMINI_FLAGS],
    resume=lambda program, sid, prompt: [
        "node",
        str(program),
        "--resume",
        sid,
        "-p",
        prompt,
        *_GEMINI_FLAGS,
    ],
    session_id=_gemini_session,
    steps=_gemini_steps,
)


# -- OpenCode ---------------------------------------------------------------------------------


def _opencode_setup(home: Path, url: str) -> dict[str, str]:
    config = home / ".config" / "opencode" / "opencode.json"
    config.parent.mkdir(parents=True, exist_ok=True)
    provider = {"npm": "@ai-sdk/openai-compatible", "name": "Scripted",
                "options": {"baseURL": url, "apiKey": "sk-scripted"},
                "models": {"scripted-model": {"name": "Scripted model"}}}  # fmt: skip
    config.write_text(json.dumps({"$schema": "https://opencode.ai/config.json",
                                  "autoupdate": False, "share": "disabled",
                                  "provider": {"scripted": provider},
                                  "model": "scripted/scripted-model"}))  # fmt: skip
    return {**base_env(home), "OPENCODE_DISABLE_AUTOUPDATE": "1"}


def _opencode_session(home: Path, stdout: str) -> str:
    for line in stdout.splitlines():
        if '"sessionID"' in line:
            return str(json.loads(line)["sessionID"])
    raise ValueError("opencode run --format json named no session")


def _opencode_steps(work: Path) -> tuple[Call, ...]:
    notes = str(work / NOTES)
    return (
        Call("bash", {"command": f"echo {MARKER}", "description": "Print the marker"}),
        Call("write", {"filePath": notes, "content": NOTE_TEXT}),
        Call("read", {"filePath": notes}),
        Call("bash", {"command": MISSING, "description": "List a missing path"}),
    )


# OpenCode joins its message words with spaces, quoting any word that holds one: a prompt
# given word by word is sent as typed.
OPENCODE = Agent(
    name="opencode",
    package="opencode-ai",
    dialect=Chat,
    prefix="/v1",
    model="scripted-model",
    binary=lambda modules: modules / f"opencode-{_platform()}" / "bin" / "opencode",
    setup=_opencode_setup,
    first=lambda program, prompt: [str(program), "run", "--format", "json", *prompt.split()],
    resume=lambda program, sid, prompt: [
        str(program),
        "run",
        "--format",
        "json",
        "--session",
        sid,
        *prompt.split(),
    ],
    session_id=_opencode_session,
    steps=_opencode_steps,
    # pinned by its linux-x64 build: the registry lacks some of the other builds the wrapper
    # names, and `npm ci` refuses a lock without them
    pinned_as=f"opencode-{_platform()}",
)

# -- GitHub Copilot CLI -----------------------------------------------------------------------


def _copilot_setup(home: Path, url: str) -> dict[str, str]:
    return {**base_env(home), "COPILOT_OFFLINE": "true", "COPILOT_PROVIDER_BASE_URL": url,
            "COPILOT_PROVIDER_API_KEY": "sk-scripted", "COPILOT_MODEL": "gpt-5.5",
            "COPILOT_AUTO_UPDATE": "false", "COPILOT_ALLOW_ALL": "true"}  # fmt: skip


def _copilot_session(home: Path, stdout: str) -> str:
    (state,) = [p for p in (home / ".copilot" / "session-state").iterdir() if p.is_dir()
                and not p.name.startswith(".")]  # fmt: skip
    return state.name


def _copilot_steps(work: Path) -> tuple[Call, ...]:
    notes = work / NOTES
    return (
        Call("bash", {"command": f"echo {MARKER}", "description": "Print the marker"}),
        Call(
            "bash",
            {
                "command": f"printf '{NOTE_TEXT.strip()}\\n' > {notes}",
                "description": "Write the notes",
            },
        ),
        Call("view", {"path": str(notes)}),
        Call("bash", {"command": MISSING, "description": "List a missing path"}),
    )


_COPILOT_FLAGS = ["--allow-all-tools", "--no-auto-update"]

# Copilot CLI runs offline against a custom provider (BYOK) speaking Chat Completions, and its
# events.jsonl is compared with the model's record like every other agent's.
COPILOT = Agent(
    name="copilot",
    package="@github/copilot",
    dialect=Chat,
    prefix="/v1",
    model="gpt-5.5",
    binary=lambda modules: modules / "@github" / "copilot" / "npm-loader.js",
    setup=_copilot_setup,
    first=lambda program, prompt: ["node", str(program), "-p", prompt, *_COPILOT_FLAGS],
    resume=lambda program, sid, prompt: [
        "node",
        str(program),
        f"--resume={sid}",
        "-p",
        prompt,
        *_COPILOT_FLAGS,
    ],
    session_id=_copilot_session,
    steps=_copilot_steps,
)

# -- Qwen Code --------------------------------------------------------------------------------


def _qwen_setup(home: Path, url: str) -> dict[str, str]:
    settings = home / ".qwen" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"security": {"auth": {"selectedType": "openai"}},
                                    "telemetry": {"enabled": False},
                                    "general": {"disableAutoUpdate": True}}))  # fmt: skip
    return {**base_env(home), "OPENAI_API_KEY": "sk-scripted", "OPENAI_BASE_URL": url,
            "OPENAI_MODEL": "qwen3-coder-plus"}  # fmt: skip


_QWEN_FLAGS = ["--yolo", "--output-format", "json", "--auth-type", "openai"]


def _qwen_session(home: Path, stdout: str) -> str:
    chats = sorted((home / ".qwen" / "projects").glob("*/chats/*.jsonl"))
    return chats[-1].stem


def _qwen_steps(work: Path) -> tuple[Call, ...]:
    task = {"description": "Check the notes", "prompt": TASK, "subagent_type": "general-purpose",
            "run_in_background": False}  # fmt: skip
    return (*_gemini_steps(work), Call("agent", task))


QWEN_CODE = Agent(
    name="qwen-code",
    package="@qwen-code/qwen-code",
    dialect=Chat,
    prefix="/v1",
    model="qwen3-coder-plus",
    binary=lambda modules: modules / "@qwen-code" / "qwen-code" / "cli-entry.js",
    setup=_qwen_setup,
    first=lambda program, prompt: ["node", str(program), prompt, *_QWEN_FLAGS],
    resume=lambda program, sid, prompt: [
        "node",
        str(program),
        "--resume",
        sid,
        prompt,
        *_QWEN_FLAGS,
    ],
    session_id=_qwen_session,
    steps=_qwen_steps,
)

# -- Pi ---------------------------------------------------------------------------------------


def _pi_setup(home: Path, url: str) -> dict[str, str]:
    models = home / ".pi" / "agent" / "models.json"
    models.parent.mkdir(parents=True, exist_ok=True)
    model = {"id": "claude-sonnet-4-5", "name": "Scripted", "reasoning": False,
             "input": ["text"], "contextWindow": 200000, "maxTokens": 8192,
             "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}}  # fmt: skip
    models.write_text(json.dumps({"providers": {"scripted": {
        "baseUrl": url, "api": "anthropic-messages", "apiKey": "sk-ant-scripted",
        "models": [model]}}}))  # fmt: skip
    return {**base_env(home), "PI_OFFLINE": "1", "PI_SKIP_VERSION_CHECK": "1"}


_PI_FLAGS = ["--provider", "scripted", "--model", "claude-sonnet-4-5", "--mode", "json"]


def _pi_session(home: Path, stdout: str) -> str:
    (log,) = (home / ".pi" / "agent" / "sessions").glob("*/*.jsonl")
    return str(json.loads(log.read_text().split("\n", 1)[0])["id"])


def _pi_steps(work: Path) -> tuple[Call, ...]:
    notes = str(work / NOTES)
    return (
        Call("bash", {"command": f"echo {MARKER}"}),
        Call("write", {"path": notes, "content": NOTE_TEXT}),
        Call("read", {"path": notes}),
        Call("bash", {"command": MISSING}),
    )


PI = Agent(
    name="pi",
    package="@mariozechner/pi-coding-agent",
    dialect=Anthropic,
    prefix="",
    model="claude-sonnet-4-5",
    binary=lambda modules: modules / "@mariozechner" / "pi-coding-agent" / "dist" / "cli.js",
    setup=_pi_setup,
    first=lambda program, prompt: ["node", str(program), "-p", prompt, *_PI_FLAGS],
    resume=lambda program, sid, prompt: [
        "node",
        str(program),
        "--session",
        sid,
        "-p",
        prompt,
        *_PI_FLAGS,
    ],
    session_id=_pi_session,
    steps=_pi_steps,
)

# -- Cline CLI --------------------------------------------------------------------------------


def _cline_setup(home: Path, url: str) -> dict[str, str]:
    # what `cline auth -p openai -k KEY -m MODEL -b URL` writes
    providers = home / ".cline" / "data" / "settings" / "providers.json"
    providers.parent.mkdir(parents=True, exist_ok=True)
    settings = {"provider": "openai-compatible", "apiKey": "sk-scripted",
                "model": "scripted-model", "baseUrl": url}  # fmt: skip
    providers.write_text(json.dumps({"version": 1, "lastUsedProvider": "openai-compatible",
                                     "modes": {}, "providers": {"openai-compatible": {
                                         "settings": settings, "tokenSource": "manual",
                                         "updatedAt": "2026-01-01T00:00:00.000Z"}}}))  # fmt: skip
    return base_env(home)


def _cline_session(home: Path, stdout: str) -> str:
    return max((home / ".cline" / "data" / "sessions").iterdir(), key=lambda f: f.name).name


def _cline_steps(work: Path) -> tuple[Call, ...]:
    notes = str(work / NOTES)
    return (
        Call("run_commands", {"commands": [f"echo {MARKER}"]}),
        Call("editor", {"path": notes, "new_text": NOTE_TEXT}),
        Call("read_files", {"files": [{"path": notes}]}),
        Call("run_commands", {"commands": [MISSING]}),
        Call("spawn_agent", {"systemPrompt": "You check files.", "task": TASK}),
    )


CLINE = Agent(
    name="cline",
    package="cline",
    dialect=Chat,
    prefix="/v1",
    model="scripted-model",
    binary=lambda modules: modules / f"@cline/cli-{_platform()}" / "bin" / "cline",
    setup=_cline_setup,
    first=lambda program, prompt: [str(program), "--json", prompt],
    resume=lambda program, sid, prompt: [str(program), "--json", "--id", sid, prompt],
    session_id=_cline_session,
    steps=_cline_steps,
    # `--id` resumes in the terminal UI only, and `--acp` serves only a Cline account's models
    resumes=False,
    # pinned by its linux-x64 build, the program itself: the wrapper names builds the registry
    # lacks
    pinned_as=f"@cline/cli-{_platform()}",
)

AGENTS = {a.name: a for a in (CLAUDE_CODE, CODEX, GEMINI_CLI, OPENCODE, COPILOT, QWEN_CODE, PI,
                              CLINE)}  # fmt: skip


def version_of(binary: Path) -> str:
    """The release an installed program is: its package's version (a platform build's, such
    as `0.169.0-linux-x64`, without its platform)."""
    for folder in binary.parents:
        manifest = folder / "package.json"
        if manifest.exists():
            return str(json.loads(manifest.read_text())["version"]).split("-")[0]
    return "?"
