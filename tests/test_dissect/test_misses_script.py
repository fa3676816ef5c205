"""benchmarks/dissect_misses.py: maxima classified as actor / distractor / background, on a
generated temporal set and a dissection run whose stored maps are replaced by hand-made ones."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from dissect.job import run_job
from dissect.job_config import JobConfig
from dissect.layout import load_run
from dissect.metrics import has_box
from tsm_apps import build_recognizer
from tsm_apps.checkpoint.reading import save_checkpoint
from tsm_apps.data.protocol import TestProtocol
from tsm_apps.synth import temporal as synth_temporal
from tsm_apps.synth.draw import L_SHAPE, bbox, place
from tsm_apps.synth.temporal_clips import plan_clip

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "dissect_misses.py"
SIZE, FRAMES = 64, 8


def _script():
    spec = importlib.util.spec_from_file_location("dissect_misses", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _spike(y: float, x: float) -> np.ndarray:
    m = np.zeros((SIZE, SIZE), np.float32)
    m[int(y), int(x)] = 1.0
    return m


def test_maxima_on_actor_distractor_and_background(tmp_path):
    data = tmp_path / "temporal"
    synth_temporal.generate(
        data, videos=10, frames=FRAMES, size=SIZE, seed=0, distractors=(2, 2), progress=False
    )
    ckpt = save_checkpoint(
        tmp_path / "m.pth",
        build_recognizer("resnet18", num_classes=10, num_segments=4, shift="offline", width=0.125),
        meta={"test_protocol": TestProtocol(scale_size=SIZE, crop_size=SIZE).to_dict()},
    )
    out = tmp_path / "run"
    run_job(
        JobConfig(
            checkpoint=str(ckpt),
            data=str(data),
            out=str(out),
            limit=2,
            sanity=False,
            units=False,
            overlays=False,
            device="cpu",
        ),
        progress=False,
    )
    run = load_run(out)
    want = {"actor": 0, "distractor": 0, "background": 0}
    far = []
    for cid, clip in sorted(run.clips.items()):
        arr = dict(clip.load_maps())
        index = int(cid.rsplit("_", 1)[-1])
        plan = plan_clip(0, index, FRAMES, SIZE, distractors=(2, 2))
        other = bbox(place(L_SHAPE, *plan.distractors[0]), SIZE, SIZE)
        maps = []
        for t, box in enumerate(arr["boxes"]):
            if not has_box(box[None])[0]:
                maps.append(_spike(0, 0))
            elif t % 3 == 0:  # the actor's box centre
                maps.append(_spike((box[1] + box[3]) / 2, (box[0] + box[2]) / 2))
                want["actor"] += 1
            elif t % 3 == 1:  # a distractor's box centre
                maps.append(_spike((other[1] + other[3]) / 2, (other[0] + other[2]) / 2))
                want["distractor"] += 1
            else:  # a corner pixel: background unless a box covers it
                y, x = (0, 0) if box[0] > 8 or box[1] > 8 else (SIZE - 1, SIZE - 1)
                maps.append(_spike(y, x))
                cx, cy = x + 0.5, y + 0.5
                assert not any(
                    b[0] <= cx <= b[2] and b[1] <= cy <= b[3]
                    for b in [box]
                    + [bbox(place(L_SHAPE, *d), SIZE, SIZE) for d in plan.distractors]
                )
                want["background"] += 1
                far.append(
                    np.hypot(max(box[0] - cx, cx - box[2], 0), max(box[1] - cy, cy - box[3], 0))
                )
        arr["maps"] = np.stack(maps)
        np.savez_compressed(out / "maps" / f"{cid}.npz", **arr)
    got = _script().classify(out)
    n = sum(want.values())
    assert got["frames"] == n and n > 0
    for k, v in want.items():
        assert got[f"on_{k}"] == pytest.approx(v / n)
    assert got["background_median_px"] == pytest.approx(float(np.median(far)))
