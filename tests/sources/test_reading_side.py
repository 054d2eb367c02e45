"""Every source's reading side is imported on first use (`parsers/base.reading_side`), and the
package's `parse` is the function whichever is imported first. Each check runs in a fresh
interpreter: this process has imported them all already."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.conftest import REPO
from tracehouse.parsers.registry import PARSERS

ENV = {**os.environ, "PYTHONPATH": str(REPO)}


def _python(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], env=ENV, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_every_source_parses_and_plans_through_its_package():
    for provider, source in PARSERS.items():
        assert callable(source.parse), provider
        plan = getattr(source, "plan_unit", None)
        assert plan is None or callable(plan), provider
    assert not hasattr(PARSERS["claude-code"], "plan_unit")  # plans from one stat


def test_the_registry_imports_no_reader():
    out = _python(
        "import sys, tracehouse.parsers.registry\n"
        "print([m for m in sys.modules if m.endswith('.reader')])"
    )
    assert out == "[]"


def test_parse_is_the_function_when_the_reader_came_first():
    """A submodule imported after its package is bound over the package's attribute of its
    name: the reader is called `reader`, so `parse` stays the function."""
    out = _python(
        "import importlib\n"
        "from tracehouse.parsers import cursor\n"
        "importlib.import_module('tracehouse.parsers.cursor.reader')\n"
        "print(cursor.parse.__name__, cursor.plan_unit.__name__)"
    )
    assert out == "parse plan_unit"


def test_import_readers_loads_only_the_sources_named():
    """What a backfill does before forking its parsers, which then share the modules."""
    out = _python(
        "import sys\n"
        "from tracehouse.parsers.registry import import_readers\n"
        "import_readers(['codex', 'codex', 'gemini-cli'])\n"
        "print(sorted(m for m in sys.modules if m.endswith('.reader')))"
    )
    assert out == "['tracehouse.parsers.codex.reader', 'tracehouse.parsers.gemini_cli.reader']"


def test_an_unknown_attribute_is_still_an_attribute_error():
    out = _python(
        "from tracehouse.parsers import codex\n"
        "try:\n    codex.nothing\nexcept AttributeError as e:\n    print(e)"
    )
    assert out == "module 'tracehouse.parsers.codex' has no attribute 'nothing'"
