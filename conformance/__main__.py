"""`python -m conformance install`: the pinned agents — `npm ci` into conformance/npm, and a venv
for each PyPI agent from its pins in conformance/pypi.

`python -m conformance run [AGENT …]`: drive each agent at its pinned release through the
scenario and print how the ledger differs from what it did (exit 1 on any difference).

`python -m conformance bump AGENT [--version V] [--pin]`: install the newest release of one
agent (or V) into a cache of its own, run the suite on it, print the differences, and with
`--pin` move the pin (conformance/npm, or conformance/pypi) when there are none.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from conformance import install
from conformance.agents import AGENTS, Agent, version_of
from conformance.compare import Difference, compare
from conformance.drive import drive

CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "tracehouse-conformance"


def check(agent: Agent, installed: Path, root: Path) -> list[Difference]:
    """The suite for one agent installed under `installed`: drive it, import what it wrote,
    compare."""
    started = time.monotonic()
    run = drive(agent, installed, root)
    for r in run.runs:
        print(f"  run  rc={r.returncode}  {r.prompt!r}")
    # an agent that edits by text offers no tools: every call of its is the conversation's
    conversation = [e for e in run.exchanges if e.conversation or agent.written]
    print(f"  model calls: {len(run.exchanges)} ({len(conversation)} of the conversation)"
          f"  session {run.session_id or '?'}  {time.monotonic() - started:.1f} s")  # fmt: skip
    if run.failed is not None:
        tail = (run.failed.stderr or run.failed.stdout)[-1500:]
        return [Difference(f"run {run.failed.argv[1:3]}", 0, run.failed.returncode, tail)]
    return compare(run, root / "ledger.db")


def run_suite(names: list[str], modules: Path, venvs: Path, keep: Path | None = None) -> int:
    failed = 0
    for name in names:
        agent = AGENTS[name]
        where = install.installed(agent, modules, venvs)
        print(f"{name} {version_of(agent, where)}")
        if not agent.binary(where).exists():
            print(f"  not installed: {install.how_to_install(agent)}")
            failed += 1
            continue
        with tempfile.TemporaryDirectory(prefix=f"conformance-{name}-") as root:
            found = check(agent, where, Path(root))
            if keep is not None:
                shutil.copytree(Path(root) / "home", keep / name, symlinks=True,
                                dirs_exist_ok=True)  # fmt: skip
        for difference in found:
            print(difference)
        print(f"  {len(found)} differences")
        failed += bool(found)
    return 1 if failed else 0


def install_pinned() -> None:
    subprocess.run(["npm", "ci", "--prefix", str(install.NPM), "--no-audit", "--no-fund",
                    "--ignore-scripts", "--loglevel=error"], check=True)  # fmt: skip
    for agent in AGENTS.values():
        if agent.registry == "pypi":
            install.sync(agent, install.pins(agent), install.VENVS / agent.name)
            print(f"{agent.name} {version_of(agent, install.VENVS / agent.name)}")


def bump(name: str, version: str, pin: bool) -> int:
    agent = AGENTS[name]
    if agent.registry == "pypi":
        return _bump_pypi(agent, version, pin)
    # the package pinned, a platform build where the wrapper lags or names missing builds
    wanted = f"{agent.pinned_as or agent.package}@{version}"
    where = CACHE / wanted.replace("/", "+")
    where.mkdir(parents=True, exist_ok=True)
    subprocess.run(["npm", "install", "--prefix", str(where), "--no-audit", "--no-fund",
                    "--ignore-scripts", "--loglevel=error", wanted], check=True)  # fmt: skip
    modules = where / "node_modules"
    before = version_of(agent, install.NODE_MODULES)
    trying = version_of(agent, modules)
    print(f"{name}: pinned {before}, trying {trying}")
    code = run_suite([name], modules, install.VENVS)
    if pin and code == 0:
        wanted = f"{agent.pinned_as or agent.package}@{trying}"
        subprocess.run(["npm", "install", "--prefix", str(install.NPM), "--save-exact",
                        "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error",
                        wanted], check=True)  # fmt: skip
        print(f"pinned {wanted} in {install.NPM}/package.json")
    elif pin:
        print("not pinned: the suite found differences")
    return code


def _bump_pypi(agent: Agent, version: str, pin: bool) -> int:
    trying = install.latest(agent) if version == "latest" else version
    where = CACHE / f"{agent.package}@{trying}"
    requirements = where / f"{agent.package}.txt"
    install.lock(agent, trying, requirements)
    install.sync(agent, requirements, where / agent.name)
    print(f"{agent.name}: pinned {version_of(agent, install.installed(agent))}, trying {trying}")
    code = run_suite([agent.name], install.NODE_MODULES, where)
    if pin and code == 0:
        shutil.copyfile(requirements, install.pins(agent))
        install.sync(agent, install.pins(agent), install.installed(agent))
        print(f"pinned {agent.package}=={trying} in {install.pins(agent)}")
    elif pin:
        print("not pinned: the suite found differences")
    return code


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m conformance",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("install", help="the pinned agents, from npm and PyPI")
    run = commands.add_parser("run", help="the suite at the pinned releases")
    run.add_argument("agents", nargs="*", choices=[*AGENTS, []], metavar="AGENT",
                     help=f"any of {', '.join(AGENTS)} (default: all)")  # fmt: skip
    run.add_argument("--modules", type=Path, default=install.NODE_MODULES,
                     help="where npm installed the agents")  # fmt: skip
    run.add_argument("--venvs", type=Path, default=install.VENVS,
                     help="where the PyPI agents' venvs are (VENVS/AGENT)")  # fmt: skip
    run.add_argument("--keep", type=Path, help="copy each agent's home here (KEEP/AGENT)")
    newest = commands.add_parser("bump", help="try the newest release of one agent")
    newest.add_argument("agent", choices=list(AGENTS))
    newest.add_argument("--version", default="latest")
    newest.add_argument("--pin", action="store_true", help="move the pin when it passes")
    args = parser.parse_args(argv)
    if args.command == "install":
        install_pinned()
        return 0
    if args.command == "run":
        return run_suite(args.agents or list(AGENTS), args.modules, args.venvs, args.keep)
    return bump(args.agent, args.version, args.pin)


if __name__ == "__main__":
    sys.exit(main())
