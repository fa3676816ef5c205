"""The import graph of the product, read from the sources (every ``import`` statement, at module
level or inside functions, ``TYPE_CHECKING`` ones included): no module imports the training
package but the training package itself, and there is no import circle."""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("tsm_apps", "detection", "dissect", "ui")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict:
    """``{module name: source path}`` of every module of the product packages."""
    out = {}
    for pkg in PACKAGES:
        for f in sorted((ROOT / pkg).rglob("*.py")):
            out[module_name(f)] = f
    return out


def _target(name: str, known: dict) -> str:
    """The longest known module that ``name`` (a module or ``module.attribute``) starts with."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        if ".".join(parts[:i]) in known:
            return ".".join(parts[:i])
    return ""


def imports_of(name: str, path: Path, known: dict) -> set:
    """Product modules that module ``name`` (file ``path``) imports."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {_target(a.name, known) for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            for a in node.names:  # "from pkg import submodule" imports the submodule
                found.add(_target(f"{mod}.{a.name}", known) or _target(mod, known))
    return {m for m in found if m and m != name}


def graph() -> dict:
    known = modules()
    return {name: imports_of(name, path, known) for name, path in known.items()}


def cycles(edges: dict) -> list:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def test_the_cycle_finder_finds_circles_of_any_length():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_reader_sees_relative_nested_and_submodule_imports(tmp_path):
    known = {"p": None, "p.a": None, "p.b": None, "p.sub": None, "p.sub.c": None}
    f = tmp_path / "a.py"
    f.write_text("def f():\n    from .b import x\nfrom . import sub\nfrom .sub.c import y\n"
                 "import os\nif TYPE_CHECKING:\n    from p.sub import c\n")
    assert imports_of("p.a", f, known) == {"p.b", "p.sub", "p.sub.c"}


def test_nothing_outside_training_imports_the_training_package():
    bad = {m: sorted(t for t in targets if t.startswith("tsm_apps.train"))
           for m, targets in graph().items() if not m.startswith("tsm_apps.train")}
    assert {m: t for m, t in bad.items() if t} == {}


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_circles(package):
    found = [c for c in cycles(graph()) if any(m.split(".")[0] == package for m in c)]
    assert found == []
