"""One agent driven through the scenario in a throwaway home: a first run and two resumes of
the same session, against one scripted model whose exchanges are the ground truth."""

from __future__ import annotations

import os
import signal
import subprocess
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from conformance.agents import Agent
from conformance.scenario import Scenario
from conformance.servers.base import Exchange, ScriptedModel

TIMEOUT = 120  # seconds a run may take: each is a few model calls on 127.0.0.1


@dataclass
class Run:
    prompt: str
    argv: list[str]
    started: str  # ISO UTC, ms
    ended: str
    returncode: int
    stdout: str
    stderr: str
    session_id: str = ""


@dataclass
class Drive:
    agent: Agent
    home: Path
    work: Path
    prompts: tuple[str, ...] = ()
    session_id: str = ""
    runs: list[Run] = field(default_factory=list)
    exchanges: list[Exchange] = field(default_factory=list)

    @property
    def failed(self) -> Run | None:
        return next((r for r in self.runs if r.returncode != 0), None)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def drive(agent: Agent, installed: Path, root: Path) -> Drive:
    """Run `agent` (installed under `installed`) through the scenario in `root`."""
    home, work = root / "home", root / "home" / "work"
    work.mkdir(parents=True, exist_ok=True)
    program = agent.binary(installed)
    done = Drive(agent, home, work)
    scenario = Scenario(agent.steps(work), agent.written)
    done.prompts = scenario.prompts
    model = ScriptedModel(agent.dialect(), scenario.answer, agent.prefix)
    with model.running():
        env = agent.setup(home, model.url)
        for index, prompt in enumerate(scenario.prompts):
            argv = (agent.first(program, prompt) if index == 0 or not agent.resumes
                    else agent.resume(program, done.session_id, prompt))  # fmt: skip
            started = _now()
            ran = subprocess.run(argv, env=env, cwd=work, capture_output=True, text=True,
                                 timeout=TIMEOUT, stdin=subprocess.DEVNULL)  # fmt: skip
            done.runs.append(Run(prompt, argv, started, _now(), ran.returncode, ran.stdout,
                                 ran.stderr))  # fmt: skip
            if ran.returncode != 0:
                break
            done.runs[-1].session_id = agent.session_id(home, ran.stdout)
            if index == 0:
                done.session_id = done.runs[-1].session_id
        _stop_left_behind(home)
    done.exchanges = model.exchanges
    return done


def _stop_left_behind(home: Path) -> None:
    """Stop what an agent left running in its throwaway home (Cline's hub daemon outlives
    the run, holding a port every home would share)."""
    wanted = f"HOME={home}".encode()
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if wanted in (proc / "environ").read_bytes().split(b"\0"):
                os.kill(int(proc.name), signal.SIGTERM)
        except (OSError, ValueError):
            continue
