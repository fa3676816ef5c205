"""``tsm dissect run --faithfulness``: curves per clip, AUC means in metrics.json, the settings
lock of a resumed run, and the comparison."""

import json

import numpy as np
import pytest
import torch

from dissect.cli import main
from dissect.faithfulness import CURVES
from dissect.job_config import JobConfig
from dissect.layout import load_run
from dissect_fixtures import AS_STORED, tiny_model, write_tiny_set
from tsm_apps.checkpoint.reading import save_checkpoint


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = write_tiny_set(tmp_path_factory.mktemp("data"), n=2)
    save_checkpoint(root / "tsm" / "best.pth", tiny_model("offline"), meta=AS_STORED)
    save_checkpoint(root / "tsn" / "best.pth", tiny_model(None, seed=1), meta=AS_STORED)
    return root


def _run(data, out, *extra, ckpt="tsm"):
    args = ["run", "--checkpoint", str(data / ckpt / "best.pth"), "--data", str(data)]
    args += ["--out", str(out), "--no-progress", "--no-units", "--no-overlays", "--no-sanity"]
    return main(args + list(extra))


@pytest.mark.parametrize("method", ["cam", "gradcam"])
def test_curves_per_clip_and_their_means_in_metrics_json(data, tmp_path, method):
    out = tmp_path / method
    assert _run(data, out, "--method", method, "--faithfulness", "--faithfulness-steps", "2") == 0
    run = load_run(out)
    assert run.settings["settings"]["faithfulness"] == 2
    agg = run.metrics["aggregate"]
    for kind in ("method", "random"):
        per_clip = {k: [] for k in CURVES}
        for cid, clip in sorted(run.clips.items()):
            f = run.metrics["clips"][cid]["scores"][kind]["faithfulness"]
            assert f["deletion_pixels"]["fractions"] == [0, 0.5, 1]
            assert f["deletion_frames"]["fractions"] == [0, 0.25, 0.5, 0.75, 1]  # T = 4
            # the untouched clip reads the explained class's softmax probability
            logits = torch.from_numpy(clip.load_maps()["logits"])
            p = float(logits.softmax(-1)[clip.record["class"]])
            for name in CURVES:
                c = f[name]
                full = c["scores"][0 if name.startswith("deletion") else -1]
                assert full == pytest.approx(p, abs=1e-5)
                assert c["auc"] == pytest.approx(np.trapezoid(c["scores"], c["fractions"]))
                per_clip[name].append(c["auc"])
        assert agg[kind]["faithfulness_clips"] == 2
        for name in CURVES:
            assert agg[kind][f"{name}_auc"] == pytest.approx(np.mean(per_clip[name]))
    assert "faithfulness_curves" in agg["method"] and "deletion_pixels_auc" not in agg["centre"]


def test_without_the_option_no_curves_and_a_resume_must_keep_it(data, tmp_path):
    out = tmp_path / "run"
    assert _run(data, out, "--limit", "1") == 0
    rec = json.loads((out / "metrics.json").read_text())
    assert "faithfulness" not in next(iter(rec["clips"].values()))["scores"]["method"]
    assert "deletion_pixels_auc" not in rec["aggregate"]["method"]
    with pytest.raises(ValueError, match="other settings.*'faithfulness': \\(None, 8\\)"):
        _run(data, out, "--limit", "1", "--faithfulness")


def test_steps_below_one_are_refused():
    with pytest.raises(ValueError, match="--faithfulness-steps must be >= 1, got 0"):
        JobConfig(checkpoint="c.pth", data="d", out="o", faithfulness=True, faithfulness_steps=0)


def test_compare_shows_each_runs_aucs_and_the_curves(data, tmp_path):
    for m in ("tsm", "tsn"):
        assert _run(data, tmp_path / m, "--faithfulness", "--faithfulness-steps", "2", ckpt=m) == 0
    cmp = tmp_path / "cmp"
    assert main(["compare", str(tmp_path / "tsm"), str(tmp_path / "tsn"), "--out", str(cmp)]) == 0
    table = json.loads((cmp / "compare.json").read_text())
    for run in table["runs"].values():
        agg = load_run(run["root"]).metrics["aggregate"]
        assert run["maps"]["deletion_frames_auc"] == agg["method"]["deletion_frames_auc"]
        assert run["random_map_faithfulness"] == {
            f"{k}_auc": agg["random"][f"{k}_auc"] for k in CURVES
        }
    page = (cmp / "compare.html").read_text()
    assert "deletion AUC, whole frames (lower = more faithful)" in page
    assert "Deletion (lower) and insertion (higher) curves" in page
