"""Where the pinned agents live and how they get there.

npm agents: `npm ci` into `npm/node_modules`, from `npm/package-lock.json`. PyPI agents: one
venv each under `pypi/venvs/`, synced by uv from `pypi/<package>.txt`, every distribution it
needs pinned (what `uv pip compile` wrote), on the Python the agent names — found on PATH or
among pyenv's versions, since uv cannot always download one.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from conformance.agents import Agent

HERE = Path(__file__).parent
NPM = HERE / "npm"
PYPI = HERE / "pypi"
NODE_MODULES = NPM / "node_modules"
VENVS = PYPI / "venvs"


def installed(agent: Agent, node_modules: Path = NODE_MODULES, venvs: Path = VENVS) -> Path:
    """Where `agent` is installed: the npm tree, or its own venv."""
    return venvs / agent.name if agent.registry == "pypi" else node_modules


def how_to_install(agent: Agent) -> str:
    if agent.registry == "pypi":
        return f"uv run python -m conformance install  (Python {agent.python}, pins {pins(agent)})"
    return f"npm ci --prefix {NPM} --ignore-scripts"


def pins(agent: Agent) -> Path:
    return PYPI / f"{agent.package}.txt"


def _uv() -> str:
    uv = os.environ.get("UV") or shutil.which("uv")
    if not uv:
        raise SystemExit("uv is not on PATH: https://docs.astral.sh/uv/")
    return uv


_VERSION = "import sys; print('%d.%d' % sys.version_info[:2])"


def _is(python: Path | str, version: str) -> bool:
    try:
        said = subprocess.run([str(python), "-c", _VERSION], capture_output=True, text=True,
                              timeout=30)  # fmt: skip
    except OSError:
        return False
    return said.returncode == 0 and said.stdout.strip() == version


def find_python(version: str) -> Path | None:
    """An interpreter of `version` (X.Y): `pythonX.Y` on PATH (a pyenv shim there may name a
    version that is not active, so each is asked), then pyenv's versions, newest patch first."""
    candidates: list[Path] = []
    if found := shutil.which(f"python{version}"):
        candidates.append(Path(found))
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    patches = sorted(pyenv.glob(f"{version}.*"), key=lambda p: [int(n) for n in
                     p.name.split(".") if n.isdigit()], reverse=True)  # fmt: skip
    candidates += [p / "bin" / "python3" for p in patches]
    return next((c for c in candidates if _is(c, version)), None)


def lock(agent: Agent, version: str, out: Path) -> None:
    """Pin `agent`'s package at `version` and everything it needs into `out`."""
    python = _python(agent)
    out.parent.mkdir(parents=True, exist_ok=True)
    wanted = out.with_suffix(".in")
    wanted.write_text(f"{agent.package}=={version}\n")
    subprocess.run([_uv(), "pip", "compile", "--quiet", "--python", str(python), "--no-header",
                    str(wanted), "-o", str(out)], check=True)  # fmt: skip
    wanted.unlink()


def sync(agent: Agent, requirements: Path, venv: Path) -> None:
    """`venv` holds exactly what `requirements` pins, on the agent's Python."""
    python = _python(agent)
    if not _is(venv / "bin" / "python", agent.python):
        subprocess.run([_uv(), "venv", "--quiet", "--clear", "--python", str(python), str(venv)],
                       check=True)  # fmt: skip
    subprocess.run([_uv(), "pip", "sync", "--quiet", "--python", str(venv / "bin" / "python"),
                    str(requirements)], check=True)  # fmt: skip


def _python(agent: Agent) -> Path:
    python = find_python(agent.python)
    if python is None:
        raise SystemExit(f"{agent.name} needs Python {agent.python}: none on PATH or in pyenv")
    return python


def latest(agent: Agent) -> str:
    """The newest release of a PyPI agent, as the index says."""
    said = subprocess.run([_uv(), "pip", "compile", "--quiet", "--no-header", "--no-deps",
                           "--python", str(_python(agent)), "-"], input=f"{agent.package}\n",
                          capture_output=True, text=True, check=True)  # fmt: skip
    line = next(x for x in said.stdout.splitlines() if x.startswith(f"{agent.package}=="))
    return line.split("==", 1)[1].strip()
