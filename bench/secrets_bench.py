"""Secrets: recall on planted secrets, false positives on the real logs, and what redaction costs.

Recall: the fixture corpus (every source, real formats) with a realistic fake secret of one of
26 kinds planted in one text of every --every (prompts, replies, tool output, commands, titles;
JSON files, JSONL lines and the databases' JSON values). A backfill with --no-redact says which
plants reach the ledger at all; then every byte tracehouse writes with redaction on is searched
for each of them: the SQLite ledger and its WAL, every export format, a gateway's ledger after a
push, and every PostgreSQL row when TRACEHOUSE_PG_DSN answers. Nothing asks the redactor.

False positives: the unmodified corpus backfilled with redaction on; every marker is listed with
its context, and counted per kind and per 10,000 messages.

Prose: each kind in each place a person pastes one (after `KEY=`, in JSON, ending a
sentence with `.`, `,` or `)`, in CJK text before `。` or inside 「」, quoted, URL-encoded,
base64), each text scanned alone.

Cost: backfill of the bench corpus (`bench/corpus.py`, --copies) with redaction on and off,
interleaved, --repeat times; medians and ranges, beside floors measured in the same run (the raw
read of the corpus, and the library's bare scan of the text the parsers keep).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import orjson

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.backfill_bench import Run, build_corpus, files_of, raw_read, spread  # noqa: E402
from tests.redaction.plant_home import Planter, files_under, plant_tree, written_bytes  # noqa: E402
from tests.redaction.planted import KINDS, PLACEMENTS, place  # noqa: E402
from tracehouse.redaction.detect import MARKER, SEPARATOR, Detector  # noqa: E402

FORMATS = ("parquet", "markdown", "html", "jsonl", "otel", "sessions-import")
OUT = HERE / "out" / "secrets"


def cli(*args: object, refused: bool = False) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "tracehouse.cli.app", *map(str, args)]
    done = subprocess.run(command, capture_output=True, text=True, env=os.environ.copy())
    if refused:
        if done.returncode != 2:
            raise SystemExit(f"{' '.join(map(str, args))} was not refused: {done.stderr}")
    elif done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(map(str, args))} failed: {done.stderr[-2000:]}")
    return done


def recall(fixtures: Path, every: int, work: Path) -> None:
    corpus = build_corpus(fixtures, 1)
    planted_corpus = work / "planted"
    shutil.copytree(corpus, planted_corpus, symlinks=True)
    config = planted_corpus / "sources.toml"
    config.write_text(config.read_text().replace(str(corpus), str(planted_corpus)))
    planter = Planter(seed=29, every=every)
    plant_tree(planted_corpus, planter)
    planted = planter.planted
    print(f"recall   {len(planted):,} secrets of {len(KINDS)} kinds planted, one text in {every}")

    verbatim = work / "verbatim.db"
    cli("sync", "backfill", "--config", config, "--store", verbatim, "--no-redact", "-q")
    data = written_bytes(verbatim)
    reached = [p for p in planted if p.value.encode() in data]
    print(f"         {len(reached):,} reach the ledger when stored verbatim (--no-redact)")

    places: dict[str, bytes] = {}
    store = work / "redacted.db"
    cli("sync", "backfill", "--config", config, "--store", store, "-q")
    places["SQLite ledger"] = written_bytes(store)
    for format in FORMATS:
        out = work / f"export-{format}"
        cli("export", "--format", format, "-o", out, "--store", store, "-q")
        places[f"export {format}"] = files_under(out)
    places["gateway ledger"] = _through_gateway(config, work)
    postgres = _postgres(config)
    if postgres is not None:
        places["PostgreSQL ledger"] = postgres
    missed: Counter[str] = Counter()
    for where, written in places.items():
        leaked = [p for p in reached if p.value.encode() in written]
        missed.update(p.kind for p in leaked)
        print(f"         {where:<20} {len(leaked)} of {len(reached):,} planted secrets written")
    kinds = Counter(p.kind for p in reached)
    print(f"         recall {1 - sum(missed.values()) / max(1, len(reached) * len(places)):.2%}"
          f" over every place; per kind:")  # fmt: skip
    for kind in sorted(kinds):
        print(f"           {kind:<22} {kinds[kind]:>4} reached, {missed[kind]} written somewhere")


def prose(samples: int) -> None:
    """Every kind in every place a person pastes one (`tests/redaction/planted.PLACEMENTS`), each
    text scanned alone so no other text of a batch gives its secret away; recall per kind and
    per placement."""
    import random

    from tracehouse.redaction.redactor import Redactor

    redactor = Redactor(b"k" * 32, Detector())
    found: Counter[tuple[str, str]] = Counter()
    for kind in KINDS:
        rng = random.Random(f"bench/{kind.name}")
        for placement in PLACEMENTS:
            for _ in range(samples):
                planted = place(rng, kind, placement)
                [text] = redactor.texts([planted.text])
                found[kind.name, placement] += text is not None and planted.value not in text
    total = samples * len(KINDS) * len(PLACEMENTS)
    print(f"prose    {len(KINDS)} kinds x {len(PLACEMENTS)} placements x {samples}: recall"
          f" {sum(found.values()) / total:.2%}")  # fmt: skip
    for kind in KINDS:
        kept = sum(found[kind.name, p] for p in PLACEMENTS)
        missed = [p for p in PLACEMENTS if found[kind.name, p] < samples]
        print(f"           {kind.name:<22} {kept / (samples * len(PLACEMENTS)):>7.2%}"
              + (f"  missed in: {', '.join(missed)}" if missed else ""))  # fmt: skip
    print("           per placement: " + ", ".join(
        f"{p} {sum(found[k.name, p] for k in KINDS) / (samples * len(KINDS)):.1%}"
        for p in PLACEMENTS))  # fmt: skip


def _through_gateway(config: Path, work: Path) -> bytes:
    from tests.gateway.server import Gateway, make_token

    store = work / "gateway.db"
    token = make_token(str(store), work, "bench", "push")
    gateway = Gateway(str(store), work / "gateway.log").start()
    try:
        cli("sync", "backfill", "--config", config, "--store", gateway.url, "--token-file", token,
            "--no-redact", "-q", refused=True)  # fmt: skip
        cli("sync", "backfill", "--config", config, "--store", gateway.url, "--token-file", token,
            "-q")  # fmt: skip
    finally:
        gateway.stop()
    return written_bytes(store)


def _postgres(config: Path) -> bytes | None:
    """Every row of a PostgreSQL ledger the planted corpus was synced into (the tests' server:
    TRACEHOUSE_PG_DSN or the local default); None, said, when none answers."""
    from tests.pg import PG_DSN, PgServer

    try:
        server = PgServer.find()
    except BaseException as exc:  # pytest's skip outside pytest
        print(f"         PostgreSQL: not measured ({PG_DSN}: {str(exc).splitlines()[0]})")
        return None
    schema = server.create_schema()
    try:
        address = server.dsn_for(schema)
        cli("sync", "backfill", "--config", config, "--store", address, "-q")
        return written_bytes(address)
    finally:
        server.drop_schema(schema)


def false_positives(fixtures: Path, work: Path) -> None:
    corpus = build_corpus(fixtures, 1)
    store = work / "fixtures.db"
    cli("sync", "backfill", "--config", corpus / "sources.toml", "--store", store, "-q")
    conn = sqlite3.connect(store)
    (messages,) = conn.execute("SELECT count(*) FROM messages").fetchone()
    kinds: Counter[str] = Counter()
    listed = []
    queries = (
        "SELECT s.label, m.content FROM messages m JOIN sessions s USING (session_id)",
        "SELECT s.label, m.thinking FROM messages m JOIN sessions s USING (session_id)",
        "SELECT s.label, c.params FROM tool_calls c JOIN sessions s USING (session_id)",
        "SELECT s.label, c.result FROM tool_calls c JOIN sessions s USING (session_id)",
        "SELECT label, title FROM sessions",
    )
    for sql in queries:
        for label, text in conn.execute(sql):
            if not text or "[REDACTED:" not in text:
                continue
            raw = text.encode("utf-8", "surrogatepass")
            for m in MARKER.finditer(raw):
                kinds[m.group(1).decode()] += 1
                around = raw[max(0, m.start() - 70) : m.end() + 20].decode("utf-8", "replace")
                listed.append((m.group(1).decode(), label, re.sub(r"\s+", " ", around)))
    conn.close()
    total = sum(kinds.values())
    print(f"markers  on the unmodified fixtures: {total} in {messages:,} messages"
          f" = {total / max(1, messages) * 10_000:.2f} per 10,000 messages")  # fmt: skip
    for kind, n in kinds.most_common():
        print(f"           {kind:<22} {n}")
    for kind, label, around in sorted(set(listed)):
        print(f"           {kind:<18} {label:<13} …{around}…")


def cost(fixtures: Path, copies: int, repeat: int) -> None:
    corpus = build_corpus(fixtures, copies)
    files = files_of(corpus)
    size, _ = raw_read(files)
    mb = size / 1e6
    texts = _kept_text(corpus)
    detector = Detector()
    detector.warm()
    config = corpus / "sources.toml"
    ledger = OUT / "cost.db"
    on, off, reads, scans = [], [], [], []
    for _ in range(repeat):
        reads.append(raw_read(files)[1])
        start = time.perf_counter()
        detector.scan(texts)
        scans.append(time.perf_counter() - start)
        for runs, flags in ((off, ["--no-redact"]), (on, [])):
            for suffix in ("", "-wal", "-shm", "-journal"):
                Path(f"{ledger}{suffix}").unlink(missing_ok=True)
            runs.append(Run(["sync", "backfill", "--config", str(config), "--store", str(ledger),
                             "--json", "-q", *flags]))  # fmt: skip
    print(f"cost     corpus {mb:,.0f} MB, {len(texts) / 1e6:,.0f} MB of text kept by the parsers")
    print(f"floor    raw read            {spread([mb / t for t in reads], 'MB/s')}")
    print(f"floor    bare scan of text   {spread([len(texts) / 1e6 / t for t in scans], 'MB/s')}")
    walls_off, walls_on = [r.wall for r in off], [r.wall for r in on]
    print(f"backfill redaction off       {spread(walls_off, 's', 1)}")
    print(f"backfill redaction on        {spread(walls_on, 's', 1)}")
    ratios = [b / a for a, b in zip(walls_off, walls_on, strict=True)]
    print(f"         on / off = {statistics.median(ratios):.2f}x (pairs: "
          + ", ".join(f"{r:.2f}" for r in ratios) + ")")  # fmt: skip
    print(f"         secrets redacted: {on[-1].report.get('redacted')}")
    print(f"memory   peak PSS on {spread([r.pss / 2**20 for r in on], 'MB')},"
          f" off {spread([r.pss / 2**20 for r in off], 'MB')}")  # fmt: skip


def _kept_text(corpus: Path) -> bytes:
    """The strings of the corpus's JSON, joined as the redactor joins a parse's texts."""
    parts = []
    for path in files_of(corpus):
        if path.suffix not in (".jsonl", ".json"):
            continue
        for line in path.read_bytes().splitlines():
            try:
                stack = [orjson.loads(line)]
            except orjson.JSONDecodeError:
                continue
            while stack:
                value = stack.pop()
                if isinstance(value, dict):
                    stack.extend(value.values())
                elif isinstance(value, list):
                    stack.extend(value)
                elif isinstance(value, str) and len(value) >= 8:
                    parts.append(value.encode("utf-8", "surrogatepass"))
    return SEPARATOR.join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=HERE.parent.parent / "shared" / "fixtures")
    parser.add_argument("--every", type=int, default=20, help="plant into one text of N")
    parser.add_argument("--copies", type=int, default=24, help="the cost corpus's copies")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--samples", type=int, default=25, help="prose: values per placement")
    parser.add_argument("--only", choices=("markers", "prose", "recall", "cost"),
                        help="one part alone")  # fmt: skip
    args = parser.parse_args()
    if args.every < 1 or args.copies < 1 or args.repeat < 1:
        raise SystemExit("--every, --copies and --repeat must be at least 1")
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=OUT) as tmp:
        work = Path(tmp)
        os.environ["XDG_DATA_HOME"] = str(work / "xdg")  # a key of its own, not the user's
        os.environ["TRACEHOUSE_PROGRESS"] = "false"
        if args.only in (None, "markers"):
            false_positives(args.corpus, work)
        if args.only in (None, "prose"):
            prose(args.samples)
        if args.only in (None, "recall"):
            recall(args.corpus, args.every, work)
        if args.only in (None, "cost"):
            cost(args.corpus, args.copies, args.repeat)


if __name__ == "__main__":
    main()
