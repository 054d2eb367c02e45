"""The agents the suite drives, one module each (`agent.py` says what the suite knows of one)."""

from conformance.agents.agent import Agent, version_of
from conformance.agents.aider import AIDER
from conformance.agents.claude_code import CLAUDE_CODE
from conformance.agents.cline import CLINE
from conformance.agents.codex import CODEX
from conformance.agents.copilot import COPILOT
from conformance.agents.gemini_cli import GEMINI_CLI
from conformance.agents.kimi_cli import KIMI_CLI
from conformance.agents.opencode import OPENCODE
from conformance.agents.pi import PI
from conformance.agents.qwen_code import QWEN_CODE

AGENTS = {a.name: a for a in (CLAUDE_CODE, CODEX, GEMINI_CLI, OPENCODE, COPILOT, QWEN_CODE, PI,
                              CLINE, KIMI_CLI, AIDER)}  # fmt: skip

__all__ = ["AGENTS", "CLAUDE_CODE", "CODEX", "Agent", "version_of"]
