"""What each source costs in code: lines of its parser package, and of the shared kit.

`uv run python bench/source_lines.py` prints, per parser package, its Python lines in all and
its code lines (not blank, not a comment, not a docstring), then the kit's. Compare a run before
and after a change with `git stash` or a worktree: the figures are the tree's as it is.
"""

from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path

PARSERS = Path(__file__).resolve().parent.parent / "src" / "tracehouse" / "parsers"


def code_lines(path: Path) -> tuple[int, int]:
    """(all lines, code lines) of a Python file."""
    text = path.read_text(encoding="utf-8")
    docstrings: set[int] = set()
    for node in ast.walk(ast.parse(text)):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            value = body[0].value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                docstrings.update(range(body[0].lineno, (body[0].end_lineno or 0) + 1))
    code: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT,
                              tokenize.DEDENT, tokenize.ENDMARKER):  # fmt: skip
            code.update(range(token.start[0], token.end[0] + 1))
    return len(text.splitlines()), len(code - docstrings)


def main() -> None:
    rows = []
    for package in sorted(p for p in PARSERS.iterdir() if (p / "__init__.py").is_file()):
        counts = [code_lines(f) for f in sorted(package.glob("*.py"))]
        rows.append((package.name, sum(c[0] for c in counts), sum(c[1] for c in counts)))
    shared = [code_lines(f) for f in sorted(PARSERS.glob("*.py"))]
    rows.append(("(parsers/*.py)", sum(c[0] for c in shared), sum(c[1] for c in shared)))
    print(f"{'source':<16}{'lines':>8}{'code':>8}")
    for name, lines, code in rows:
        print(f"{name:<16}{lines:>8}{code:>8}")


if __name__ == "__main__":
    main()
