"""Resolved config differences, on config files written here and on the bundled synth pair."""

from detection.config_compare import MISSING, config_differences, flat_settings, setting


def test_flat_settings_and_differences(tmp_path):
    (tmp_path / "a.py").write_text(
        "model = dict(backbone=dict(shift='online', depth=18))\nx = [1, 2]\n"
    )
    (tmp_path / "b.py").write_text(
        "_base_ = ['./a.py']\nmodel = dict(backbone=dict(shift=None))\ny = 3\n"
    )
    assert flat_settings({"m": {"b": {"s": 1}}, "x": [1]}) == {"m.b.s": 1, "x": [1]}
    assert config_differences(tmp_path / "a.py", tmp_path / "b.py") == {
        "model.backbone.shift": ("online", None),
        "y": (MISSING, 3),
    }
    assert setting(tmp_path / "b.py", "model.backbone.depth") == 18


def test_the_demo_detectors_differ_in_the_shift():
    diff = config_differences("rfcn_synth_tsn", "rfcn_synth_tsm")
    assert diff["model.backbone.shift"] == (None, "online")
