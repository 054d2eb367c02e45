"""The house matches its plan: import-linter's layer contract (`pyproject.toml`) holds, no module
imports another that imports it back (type-only imports included), and the table of packages in
`docs/architecture.md` lists the contract's layers in the contract's order."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import grimp
import pytest
from importlinter.cli import lint_imports

ROOT = Path(__file__).parent.parent
PACKAGE = ROOT / "src" / "tracehouse"


def _contract_layers() -> list[set[str]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    (contract,) = config["tool"]["importlinter"]["contracts"]
    return [{name.strip() for name in layer.split("|")} for layer in contract["layers"]]


def _documented_layers() -> list[set[str]]:
    """The packages of the architecture page's table, grouped by the layer each row names."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| (\d+) \| `([a-z_]+)(?:/|\.py)` \|", text, flags=re.MULTILINE)
    grouped: dict[int, set[str]] = {}
    for layer, package in rows:
        grouped.setdefault(int(layer), set()).add(package)
    assert sorted(grouped) == list(range(1, len(grouped) + 1)), "layers numbered 1, 2, 3, …"
    return [grouped[n] for n in sorted(grouped)]


def test_the_layer_contract_holds(capsys: pytest.CaptureFixture[str]) -> None:
    kept = lint_imports(str(ROOT / "pyproject.toml"), no_cache=True, no_logo=True)
    assert kept == 0, capsys.readouterr().out


def test_every_package_is_in_a_layer() -> None:
    """A new package or module at the top of the library has a place in the contract (the
    contract is exhaustive) and on the map."""
    present = {p.stem for p in PACKAGE.iterdir() if p.suffix == ".py" and p.stem != "__init__"}
    present |= {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    assert set().union(*_contract_layers()) == present


def test_the_map_is_the_contract() -> None:
    assert _documented_layers() == _contract_layers()


def test_no_module_imports_one_that_imports_it_back() -> None:
    graph = grimp.build_graph("tracehouse", cache_dir=None)
    edges = {m: graph.find_modules_directly_imported_by(m) for m in graph.modules}
    circles = _circles(edges)
    assert not circles, "\n".join(" → ".join(c) for c in circles)


def _circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_circle_finder_finds_a_circle() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _circles(edges) == [["a", "b", "c"]]
