"""The ``tsm`` command finds its sub-commands through the ``tsm.commands`` entry points."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import entry_points

from tsm_apps import cli

DECLARED = {
    "synth",
    "flow",
    "train",
    "test",
    "live",
    "export",
    "bench",
    "detect",
    "dissect",
    "ui",
    "demo",
}


def test_every_declared_command_is_an_entry_point_with_main_and_build_parser():
    eps = {ep.name: ep for ep in entry_points(group=cli.GROUP)}
    assert set(eps) == DECLARED
    for name, ep in eps.items():
        if name in ("detect",):  # importing it loads mmdet; checked by its own tests
            continue
        module = sys.modules.get(ep.module) or __import__(ep.module, fromlist=["main"])
        assert callable(ep.load()) and callable(module.build_parser), name


def test_help_lists_every_command_with_its_summary_and_imports_no_mm_library():
    code = (
        "import sys; from tsm_apps import cli; rc = cli.main(['--help']); "
        "print('MM', sorted(m for m in sys.modules if m.split('.')[0] in "
        "('mmdet', 'mmengine', 'mmcv', 'detection'))); sys.exit(rc)"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    lines = {ln.split()[0]: ln for ln in r.stdout.splitlines() if ln.startswith("  ")}
    assert set(lines) == DECLARED
    assert "R-FCN" in lines["detect"] and "Streamlit" in lines["ui"]
    assert "MM []" in r.stdout


def test_unknown_command_exits_2_and_lists_the_commands(capsys):
    assert cli.main(["nope"]) == 2
    err = capsys.readouterr().err
    assert "unknown command 'nope'" in err and "  dissect" in err


def test_a_user_error_is_one_line_with_exit_2(capsys, tmp_path):
    assert cli.main(["export", str(tmp_path / "none.pth"), "--out", str(tmp_path / "x.onnx")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("tsm export: error:") and "none.pth" in err and "\n" not in err
