"""pyproject.toml is the one list of dependencies; tools/requirements.txt only pins versions of
that list; every third-party module the product imports belongs to a declared dependency (so
``pip install .`` gives a working ``tsm`` for every sub-command)."""

import ast
import re
import sys
from importlib.metadata import packages_distributions
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ("tsm_apps", "detection", "dissect", "ui")
# modules provided by a dependency under another distribution's name
PROVIDED_BY = {"torch.utils.tensorboard": "tensorboard"}


def norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def req_name(req: str) -> str:
    return norm(re.split(r"[<>=!~\[; ]", req.strip(), maxsplit=1)[0])


def declared() -> tuple:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime = {req_name(r) for r in project["dependencies"]}
    extras = {
        req_name(r) for group in project.get("optional-dependencies", {}).values() for r in group
    }
    return runtime, extras


def pins() -> dict:
    out = {}
    for n, line in enumerate((ROOT / "tools" / "requirements.txt").read_text().splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        m = re.fullmatch(r"([A-Za-z0-9_.\-]+)==([A-Za-z0-9_.+\-]+)", line)
        assert m, f"requirements.txt:{n}: {line!r} is not a 'name==version' pin"
        out[norm(m.group(1))] = m.group(2)
    return out


def imported_top_modules() -> set:
    found = set()
    for pkg in PRODUCT:
        for f in (ROOT / pkg).rglob("*.py"):
            for node in ast.walk(ast.parse(f.read_text())):
                if isinstance(node, ast.Import):
                    found |= {a.name for a in node.names}
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    found.add(node.module)
    return found


def test_requirements_only_pin_what_pyproject_lists():
    runtime, extras = declared()
    pinned = pins()
    assert set(pinned) == runtime | extras
    tomllib.loads((ROOT / "pyproject.toml").read_text())  # parses


def undeclared(runtime: set) -> dict:
    """``{module: distributions}`` of imported third-party modules none of whose distributions
    is in ``runtime``."""
    dists = {k: {norm(d) for d in v} for k, v in packages_distributions().items()}
    missing = {}
    for mod in imported_top_modules():
        top = mod.split(".")[0]
        if top in PRODUCT or top in sys.stdlib_module_names:
            continue
        provided = {norm(PROVIDED_BY[p]) for p in PROVIDED_BY if mod.startswith(p)}
        owners = provided or dists.get(top, {f"<no distribution for {top}>"})
        if not owners & runtime:
            missing[mod] = sorted(owners)
    return missing


def test_every_imported_third_party_module_is_a_declared_runtime_dependency():
    assert undeclared(declared()[0]) == {}


def test_the_checker_sees_a_missing_dependency():
    missing = undeclared({"torch"})
    assert "cv2" in missing and "scipy.io" in missing and "torch.utils.tensorboard" in missing
