"""`tsm_apps` never pulls in mmdet/mmengine/mmcv (checked in a fresh interpreter)."""

import subprocess
import sys

CODE = """
import sys
import tsm_apps, tsm_apps.checkpoint.reading, tsm_apps.checkpoint.export, tsm_apps.models.online, tsm_apps.models.inflate
import tsm_apps.data, tsm_apps.train
bad = sorted(m for m in sys.modules if m.split('.')[0] in ('mmdet', 'mmengine', 'mmcv'))
print(','.join(bad))
"""


def test_tsm_apps_imports_no_openmmlab():
    out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
