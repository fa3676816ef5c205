"""``tsm detect train`` / ``test`` on a VID tree whose train and val XML hold boxes ending on or
past the image border (``xmax = width``, ``ymax = height``, as the ILSVRC annotations have
them): training keeps those frames with FGFA's clipped boxes, the test completes, and its
``metrics.json`` equals the re-typed FGFA evaluation (``fgfa_vid_eval.py``) of its own
``results.json`` to 0.01 mAP overall and on the slow / medium / fast splits."""

import json
from pathlib import Path

import pytest
from mmdet.registry import DATASETS
from mmengine.config import Config
from mmengine.registry import init_default_scope

import detection
from fgfa_vid_eval import fgfa_map, snippet_frames
from tsm_apps.cli import main as tsm
from tsm_apps.synth.vid import generate
from vid_fixtures import push_to_border

SYNTH = str(Path(detection.__file__).parent / "configs" / "rfcn_synth_tsm.py")
SIZE = 64
# the synthetic set's classes in the config's label order (airplane, car, zebra, watercraft)
WNIDS = ["n02691156", "n02958343", "n02391049", "n04530566"]


@pytest.mark.slow
def test_border_boxes_train_and_test_like_fgfa(tmp_path):
    root = generate(
        tmp_path / "vid",
        train_videos=2,
        val_videos=2,
        frames=12,
        width=SIZE,
        height=SIZE,
        det_images=0,
    )
    changed = push_to_border(root)
    assert {s for s, *_ in changed} == {"train", "val", "test"} and len(changed) > 8
    work = tmp_path / "work"
    assert (
        tsm(
            [
                "detect",
                "train",
                SYNTH,
                "--work-dir",
                str(work),
                "--cfg-options",
                f"data_root={root}/",
                "train_cfg.max_iters=20",
                "train_dataloader.batch_size=1",
            ]
        )
        == 0
    )

    # the run's training set: no frame skipped, every changed train frame a key frame whose
    # first box is clipped to the image (edge coordinates: x2 or y2 = 64)
    cfg = Config.fromfile(str(work / "config.py"))
    init_default_scope("mmdet")
    ds = DATASETS.build(cfg.train_dataloader.dataset)
    assert ds.skipped_frames == [] and ds.dropped_objects == []
    infos = {(i["video"], i["frame_id"]): i for i in map(ds.get_data_info, range(len(ds)))}
    for split, snippet, t, kind in changed:
        if split == "train":
            box = infos[(next(v for v in ds.video_index if v.endswith(snippet)), t)]["instances"][
                0
            ]["bbox"]
            assert box[2 if kind == "x" else 3] == SIZE

    out = work / "test" / "results.json"
    assert (
        tsm(
            [
                "detect",
                "test",
                SYNTH,
                str(work / "final.pth"),
                "--out",
                str(out),
                "--cfg-options",
                f"data_root={root}/",
            ]
        )
        == 0
    )
    metrics = json.loads((out.parent / "metrics.json").read_text())
    results = json.loads(out.read_text())
    assert results["classes"] == ["airplane", "car", "zebra", "watercraft"]
    dets = {}
    for fr in results["frames"]:
        snippet, name = Path(fr["img_path"]).parent.name, Path(fr["img_path"]).stem
        dets.setdefault(snippet, {})[name] = [
            (s, lab, [b[0], b[1], b[2] - 1, b[3] - 1])
            for b, s, lab in zip(fr["boxes"], fr["scores"], fr["labels"])
        ]
    frames = []
    for snippet in sorted(dets):
        frames += snippet_frames(
            root / "Annotations" / "VID" / "val" / snippet, WNIDS, dets[snippet]
        )
    ref = fgfa_map(frames)
    assert metrics["n_frames"] == len(frames) == 24 and sum(map(len, dets.values())) == 24
    assert sum(len(d) for _, d in frames) > 0 and metrics["mAP"] > 0
    for key in ("mAP", "mAP_slow", "mAP_medium", "mAP_fast"):
        if ref[key] is None:
            assert metrics[key] is None, key
        else:
            assert abs(metrics[key] - ref[key]) <= 0.01, (key, metrics[key], ref[key])
