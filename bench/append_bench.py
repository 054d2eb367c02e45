"""What a sync costs when a person has just said something more: cron's or a hook's next run.

    uv run python bench/append_bench.py [--home NAME] [--rounds 7] [--before SRC]

Copies a Claude Code home of the fixtures (`--home`, a folder of `homes/`) and backfills it
into a new ledger with the default settings (secrets redacted, search by meaning on), then
runs interleaved rounds of:

  no change   `tracehouse sync backfill` with nothing new (the floor)
  append      a new exchange appended to the largest transcript (a prompt and a reply in the
              file's own shape: its last user and assistant lines with new ids and new text),
              then the same command: its rows written, indexed and embedded

and prints each command's wall time from process start (median and range) and the append's
cost over the floor of the same round. `--before SRC` (another checkout's `src/`: `git worktree
add /tmp/before <rev>`) times the same rounds on a copy of its own, each side with its own
ledger and state. The target (issue #20): append ≤ no change + 0.2 s.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
TRACEHOUSE = str(Path(sys.executable).with_name("tracehouse"))


class Side:
    """One version of tracehouse with a home, a ledger and state of its own."""

    def __init__(self, name: str, home: Path, src: Path | None) -> None:
        self.name = name
        self.root = Path(tempfile.mkdtemp(prefix=f"append-{name}-"))
        self.home = self.root / "home"
        shutil.copytree(home, self.home, symlinks=True)
        self.env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        self.env.update(XDG_STATE_HOME=str(self.root / "state"),
                        XDG_DATA_HOME=str(self.root / "data"))  # fmt: skip
        if src is not None:
            self.env["PYTHONPATH"] = str(src.resolve())
        transcripts = list((self.home / ".claude" / "projects").rglob("*.jsonl"))
        if not transcripts:
            raise SystemExit(f"{home}: no Claude Code transcript under .claude/projects")
        self.transcript = max(transcripts, key=lambda p: p.stat().st_size)

    def sync(self) -> tuple[float, dict[str, object]]:
        command = [TRACEHOUSE, "sync", "backfill", "--home", str(self.home),
                   "--store", str(self.root / "ledger.db"), "--json", "-q"]  # fmt: skip
        started = time.perf_counter()
        done = subprocess.run(command, env=self.env, capture_output=True, check=True)
        return time.perf_counter() - started, json.loads(done.stdout)

    def say_more(self) -> None:
        """A prompt and its reply, as the transcript's own last ones with new ids and text."""
        lines = [json.loads(line) for line in self.transcript.read_bytes().splitlines() if line]
        asked = next(r for r in reversed(lines) if r.get("type") == "user")
        answered = next(r for r in reversed(lines) if r.get("type") == "assistant")
        fresh = uuid.uuid4().hex
        prompt = {
            **asked,
            "uuid": str(uuid.uuid4()),
            "parentUuid": lines[-1].get("uuid"),
            "message": {"role": "user", "content": f"And what about case {fresh}?"},
        }
        reply = {**answered, "uuid": str(uuid.uuid4()), "parentUuid": prompt["uuid"],
                 "message": {**answered.get("message", {}), "id": f"msg_{fresh[:24]}",
                             "content": [{"type": "text", "text": f"Case {fresh} is the same:"
                                          " the parser reads it as before."}]}}  # fmt: skip
        with self.transcript.open("a") as f:
            f.write(json.dumps(prompt) + "\n" + json.dumps(reply) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", default="iansherr-claude-code-log")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--before", type=Path, help="another checkout's src/ to time beside")
    parser.add_argument("--fixtures", type=Path,
                        default=Path(os.environ.get("TRACEHOUSE_CORPUS", HERE.parent.parent
                                                    / "shared" / "fixtures")))  # fmt: skip
    args = parser.parse_args()
    home = args.fixtures / "homes" / args.home
    if not home.is_dir():
        raise SystemExit(f"--home {args.home}: no such home in {args.fixtures / 'homes'}")
    if args.rounds < 2:
        raise SystemExit("--rounds must be at least 2")
    if args.before is not None and not (args.before / "tracehouse").is_dir():
        raise SystemExit(f"--before {args.before}: no tracehouse package there")
    sides = [Side("this", home, None)]
    if args.before is not None:
        sides.append(Side("before", home, args.before))
    try:
        for side in sides:  # the first load, and a run that warms the caches
            side.sync()
            side.sync()
        times: dict[tuple[str, str], list[float]] = {}
        for _ in range(args.rounds):
            for side in sides:
                floor, _report = side.sync()
                side.say_more()
                appended, report = side.sync()
                if not report.get("embedded"):
                    raise SystemExit(f"{side.name}: the appended exchange was not embedded")
                times.setdefault((side.name, "no change"), []).append(floor)
                times.setdefault((side.name, "append"), []).append(appended)
                times.setdefault((side.name, "append − no change"), []).append(appended - floor)
        print(f"{home.name}: {args.rounds} interleaved rounds, wall time from process start")
        for (name, what), seconds in times.items():
            print(f"  {name:<7} {what:<20} median {statistics.median(seconds):6.2f} s"
                  f"   range {min(seconds):.2f}–{max(seconds):.2f} s")  # fmt: skip
    finally:
        for side in sides:
            shutil.rmtree(side.root, ignore_errors=True)


if __name__ == "__main__":
    main()
