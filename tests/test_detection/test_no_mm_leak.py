"""Every module of ``tsm_apps`` and ``dissect`` imports without mmdet/mmengine/mmcv.

tests/test_tsm_apps/test_imports.py and tests/test_dissect/test_no_mm_imports.py check named
entry modules; this walks *all* submodules (so a new module cannot slip through), and checks
that the probe does see the mm libraries when ``detection`` is imported (so it can fail).
"""

import json
import subprocess
import sys

PROBE = """
import importlib, json, pkgutil, sys
roots = sys.argv[1].split(',')
names = []
for root in roots:
    pkg = importlib.import_module(root)
    names.append(root)
    for info in pkgutil.walk_packages(getattr(pkg, '__path__', []), root + '.'):
        if info.name.rsplit('.', 1)[-1] != '__main__':
            importlib.import_module(info.name)
            names.append(info.name)
mm = sorted(m for m in sys.modules if m.split('.')[0] in ('mmdet', 'mmengine', 'mmcv'))
print(json.dumps({'imported': names, 'mm': mm}))
"""


def probe(roots: str) -> dict:
    out = subprocess.run([sys.executable, "-c", PROBE, roots], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_all_tsm_apps_and_dissect_modules_import_no_mm_library():
    res = probe("tsm_apps,dissect")
    assert "tsm_apps.models.shift" in res["imported"] and "dissect.cam" in res["imported"]
    assert res["mm"] == [], res["mm"][:10]


def test_probe_sees_mm_libraries_imported_by_detection():
    res = probe("detection.backbone")
    assert any(m.startswith("mmdet") for m in res["mm"])
