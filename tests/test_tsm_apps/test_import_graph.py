"""The import graph of the product, read from the sources (every ``import`` statement, at module
level or inside functions, ``TYPE_CHECKING`` ones included): dependencies point one way
(ui -> {detection, dissect} -> tsm_apps; the two middle packages never import each other;
tsm_apps and dissect never import OpenMMLab), no module imports the training package but the
training package itself and the benchmarks that measure it (``tsm_apps.bench``), and there is no
import circle. The product, the benchmarks and the
tools stand apart from the test harness: none of them edits ``sys.path`` or imports a module of
``tests/``. The Streamlit app's own layers are held by ``test_app_layers.py``."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("tsm_apps", "detection", "dissect", "ui")
OPENMMLAB = ("mmdet", "mmengine", "mmcv")
# package -> the top-level packages none of its modules may import, anywhere in a file
NEVER = {
    "tsm_apps": ("detection", "dissect", "ui") + OPENMMLAB,
    "dissect": ("detection", "ui") + OPENMMLAB,
    "detection": ("dissect", "ui"),
}
HARNESS_USERS = ("benchmarks", "tools")  # scripts beside the product, run from the checkout


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


def import_sites(name: str, path: Path) -> list:
    """``(line, module, names)`` of every import statement of module ``name`` (file ``path``),
    anywhere in the file, relative imports made absolute; ``names`` is ``()`` for ``import m``
    and the imported names for ``from m import a, b``."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    sites = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            sites += [(node.lineno, a.name, ()) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            sites.append((node.lineno, mod, tuple(a.name for a in node.names)))
    return sorted(sites)


def targets_of(name: str, path: Path, known: dict) -> list:
    """``(line, product module)`` of every import of a product module by module ``name``."""
    found = set()
    for line, mod, names in import_sites(name, path):
        # "from pkg import submodule" imports the submodule
        found |= {(line, _target(f"{mod}.{a}", known) or _target(mod, known)) for a in names}
        found |= {(line, _target(mod, known))} if not names else set()
    return sorted((line, m) for line, m in found if m and m != name)


def imports_of(name: str, path: Path, known: dict) -> set:
    """Product modules that module ``name`` (file ``path``) imports."""
    return {m for _, m in targets_of(name, path, known)}


def graph() -> dict:
    known = modules()
    return {name: imports_of(name, path, known) for name, path in known.items()}


def forbidden_imports(known: dict, root: Path = ROOT) -> list:
    """``"file:line imports module"`` for every import that breaks ``NEVER``; ``known``:
    ``{module name: source path}``, paths shown relative to ``root``."""
    bad = []
    for name, path in sorted(known.items()):
        banned = NEVER.get(name.split(".")[0], ())
        bad += [
            f"{path.relative_to(root)}:{line} imports {mod}"
            for line, mod, _ in import_sites(name, path)
            if mod.split(".")[0] in banned
        ]
    return bad


def scripts() -> dict:
    """``{module name: source path}`` of the product, the benchmarks and the tools."""
    out = modules()
    for folder in HARNESS_USERS:
        out.update({module_name(f): f for f in sorted((ROOT / folder).rglob("*.py"))})
    return out


def modules_of_tests() -> set:
    """Names a module of ``tests/`` can be imported by: ``tests`` and every file's stem (the
    test folders are put on ``sys.path`` by pytest)."""
    return {"tests"} | {f.stem for f in (ROOT / "tests").rglob("*.py")}


def harness_leaks(known: dict, tests: set, root: Path = ROOT) -> list:
    """``"file:line what"`` for every use of ``sys.path`` and every import of a module in
    ``tests`` by the modules of ``known``."""
    bad = []
    for name, path in sorted(known.items()):
        where = path.relative_to(root)
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Attribute)
                and node.attr == "path"
                and isinstance(node.value, ast.Name)
                and node.value.id == "sys"
            ):
                bad.append(f"{where}:{node.lineno} uses sys.path")
        bad += [
            f"{where}:{line} imports {mod}"
            for line, mod, _ in import_sites(name, path)
            if mod.split(".")[0] in tests
        ]
    return bad


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
    f.write_text(
        "def f():\n    from .b import x\nfrom . import sub\nfrom .sub.c import y\n"
        "import os\nif TYPE_CHECKING:\n    from p.sub import c\n"
    )
    assert imports_of("p.a", f, known) == {"p.b", "p.sub", "p.sub.c"}


TRAINING_USERS = ("tsm_apps.train", "tsm_apps.bench")  # training itself; what measures it


def test_nothing_outside_training_and_its_benchmarks_imports_the_training_package():
    bad = {
        m: sorted(t for t in targets if t.startswith("tsm_apps.train"))
        for m, targets in graph().items()
        if not m.startswith(TRAINING_USERS)
    }
    assert {m: t for m, t in bad.items() if t} == {}


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_circles(package):
    found = [c for c in cycles(graph()) if any(m.split(".")[0] == package for m in c)]
    assert found == []


def test_the_rules_checker_sees_imports_inside_functions(tmp_path):
    files = {
        "dissect.a": "import os\ndef f():\n    from ..detection import b\n",
        "dissect.c": "def g():\n    if True:\n        import mmcv.ops\n",
        "detection.b": "from dissect.a import f\n",
        "detection.d": "import mmdet\nfrom . import b\n",
        "tsm_apps.e": "def h():\n    import ui.app\n",
    }
    known = {}
    for name, text in files.items():
        known[name] = tmp_path / (name.replace(".", "/") + ".py")
        known[name].parent.mkdir(exist_ok=True)
        known[name].write_text(text)
    assert forbidden_imports(known, tmp_path) == [
        "detection/b.py:1 imports dissect.a",
        "dissect/a.py:3 imports detection",
        "dissect/c.py:3 imports mmcv.ops",
        "tsm_apps/e.py:2 imports ui.app",
    ]


def test_dependencies_point_one_way_and_siblings_never_import_each_other():
    assert forbidden_imports(modules()) == []


def test_the_harness_checker_sees_sys_path_and_test_imports(tmp_path):
    files = {
        "benchmarks/a.py": "import sys\ndef f():\n    sys.path[:0] = ['x']\n"
        "    from ui_fixtures import g\n",
        "tools/b.py": "from tests.sample_videos import v\nimport sys\nprint(sys.argv)\n",
        "ui/c.py": "import sys\nsys.path.insert(0, 'y')\nimport tools.b\n",
    }
    known = {}
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(exist_ok=True)
        (tmp_path / rel).write_text(text)
        known[rel[:-3].replace("/", ".")] = tmp_path / rel
    assert harness_leaks(known, {"tests", "ui_fixtures"}, tmp_path) == [
        "benchmarks/a.py:3 uses sys.path",
        "benchmarks/a.py:4 imports ui_fixtures",
        "tools/b.py:1 imports tests.sample_videos",
        "ui/c.py:2 uses sys.path",
    ]


def test_product_benchmarks_and_tools_leave_sys_path_and_the_tests_alone():
    known = scripts()
    assert {"benchmarks.bench_app", "tools.random_models", "ui.app.main"} <= set(known)
    assert "ui_fixtures" in modules_of_tests()
    assert harness_leaks(known, modules_of_tests()) == []
