import subprocess
import sys


def test_dissect_never_imports_mm_libraries():
    code = (
        "import sys, dissect.cli, dissect.job, dissect.report, dissect.detector_attention, "
        "dissect.gradcam, dissect.units\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('mmdet', 'mmengine', 'mmcv'))\n"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr
