"""What rendering a transcript costs, per library, on the fixtures' own messages.

    uv run python bench/render_bench.py [--ledger PATH] [--repeat 5]

Reads every user and assistant message of a ledger (by default a fresh backfill of every fixture
home) and times, over the same texts, interleaved and repeated: the floor (escaping the text, as
the pages did before), markdown-it-py alone, markdown-it-py with nh3's cleaning (what the pages
run; Pygments highlighting included through markdown-it's hook), and nh3 alone. Printed: MB/s
and the ratio to the floor, median and range over `--repeat`; the ms a 1,000-message page spends.
"""

from __future__ import annotations

import argparse
import html
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ledger", type=Path)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--corpus", type=Path, default=HERE.parent.parent / "shared" / "fixtures")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ledger = args.ledger or Path(tmp) / "ledger.db"
        if args.ledger is None:
            for home in sorted((args.corpus / "homes").iterdir()):
                subprocess.run(
                    [
                        sys.executable,
                        "-m",
                        "tracehouse.cli.app",
                        "sync",
                        "backfill",
                        "--home",
                        str(home),
                        "--store",
                        str(ledger),
                        "-q",
                    ],
                    check=False,
                )
        texts = _texts(ledger)
    import nh3
    from markdown_it import MarkdownIt

    from tracehouse.exports.rendering import ATTRIBUTES, SCHEMES, TAGS, Renderer

    page = Renderer(cache=1)
    bare = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])
    rendered = [bare.render(t) for t in texts]
    ways: dict[str, Callable[[], object]] = {
        "floor: escape": lambda: [html.escape(t) for t in texts],
        "markdown-it-py": lambda: [bare.render(t) for t in texts],
        "nh3 clean alone": lambda: [nh3.clean(h, tags=TAGS, attributes=ATTRIBUTES,
                                              url_schemes=SCHEMES) for h in rendered],
        "pages: md + Pygments + nh3": lambda: [page._markdown(t) for t in texts],
    }  # fmt: skip
    try:  # a faster Markdown library, where installed, for the comparison
        import mistune

        fast = mistune.create_markdown(escape=True, plugins=["table", "strikethrough"])
        ways["mistune (for comparison)"] = lambda: [fast(t) for t in texts]
    except ImportError:
        print("mistune not installed: no comparison with it (uv pip install mistune)")
    size = sum(len(t.encode()) for t in texts)
    took: dict[str, list[float]] = {name: [] for name in ways}
    for _ in range(args.repeat):
        for name, run in ways.items():
            started = time.perf_counter()
            run()
            took[name].append(time.perf_counter() - started)
    floor = statistics.median(took["floor: escape"])
    print(f"texts    {len(texts):,} messages, {size / 1e6:.1f} MB")
    for name, seconds in took.items():
        mid = statistics.median(seconds)
        per_page = mid / len(texts) * 1000 * 1000
        print(f"{name:<28} {size / mid / 1e6:8.1f} MB/s (range {size / max(seconds) / 1e6:.1f}–"
              f"{size / min(seconds) / 1e6:.1f}) = {mid / floor:6.1f}x the floor;"
              f" {per_page:6.1f} ms per 1,000 messages")  # fmt: skip


def _texts(ledger: Path) -> list[str]:
    import sqlite3

    conn = sqlite3.connect(ledger)
    rows = conn.execute(
        "SELECT content FROM messages WHERE role IN ('user', 'assistant')"
        " AND content IS NOT NULL AND message_type != 'host'"
    ).fetchall()
    conn.close()
    return [r[0] for r in rows]


if __name__ == "__main__":
    main()
