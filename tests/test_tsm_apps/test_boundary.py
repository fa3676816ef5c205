"""``tsm_apps`` is a library that imports nothing above it: no module under tsm_apps/ imports
or names (in a string) ``detection``, ``dissect`` or ``ui``, and importing every module of it
loads none of them."""

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import tsm_apps

ABOVE = ("detection", "dissect", "ui")
MODULE_STRING = re.compile(r"^(%s)(\.\w+)*(:\w+)?$" % "|".join(ABOVE))
PROBE = """
import importlib, json, pkgutil, sys
import tsm_apps
for info in pkgutil.walk_packages(tsm_apps.__path__, 'tsm_apps.'):
    if info.name.rsplit('.', 1)[-1] != '__main__':
        importlib.import_module(info.name)
print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in %r)))
""" % (ABOVE,)


def offences(source: str) -> list:
    """Imports of, and string constants naming, a package above ``tsm_apps``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.split(".")[0] in ABOVE]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found += [node.module] if node.module.split(".")[0] in ABOVE else []
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found += [node.value] if MODULE_STRING.match(node.value) else []
    return found


def test_the_checker_catches_imports_and_module_strings():
    src = (
        "import detection\nfrom ui.app import x\nimport os\n"
        "m = importlib.import_module('dissect.cli')\nep = 'detection.cli:main'\ns = 'detection'\n"
        "t = 'video detection'\n"
    )
    assert sorted(offences(src)) == [
        "detection",
        "detection",
        "detection.cli:main",
        "dissect.cli",
        "ui.app",
    ]


def test_no_module_of_tsm_apps_names_a_package_above_it():
    root = Path(tsm_apps.__file__).parent
    bad = {str(f.relative_to(root)): offences(f.read_text()) for f in sorted(root.rglob("*.py"))}
    assert {f: o for f, o in bad.items() if o} == {}
    assert len(bad) > 30  # every module was read


def test_importing_all_of_tsm_apps_loads_nothing_above_it():
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []
