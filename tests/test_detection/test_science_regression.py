"""The science, guarded: online TSM's R-FCN detects objects on corrupted frames (occlusion bar,
glare, camera shake) better than the TSN R-FCN, because its shifted channels carry features of
the frames before; the gain is largest on glare (a washed-out frame between clean ones).

Setting (``SETTING``): the bundled ``rfcn_synth_tsm`` / ``rfcn_synth_tsn`` configs unchanged (one
clip of 4 frames per step, the losses on its key frame; TSN on the same clips with the shift
off, so the two differ only in the shift; 900 iterations) on ``tsm synth vid``'s set with 16 val
and 16 test snippets instead of 8 (seed 0: 24 train snippets of 24 frames at 160x128, objects
blurred along their motion), training seed 4, scored on the held-out test snippets (121
corrupted frames, 19 of them glare), one thread -- the detection of ``tsm demo``'s first seed.
Both models are trained and tested through ``tsm detect train`` / ``tsm detect test``. The
margins were measured with seeds 4-6, which took no part in choosing the setting (see the
comment above ``MARGIN``). ``--arms`` re-measures other detectors (``ARMS``: the single-frame
TSN, GroupNorm backbones)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

import detection
from tsm_apps.cli import main as tsm
from tsm_apps.synth.vid import generate
from tsm_apps.synth.vid_snippets import MOTION_BLUR

CONFIGS = Path(detection.__file__).parent / "configs"
GROUP_NORM = ["model.backbone.norm=group", "model.backbone.norm_groups=8"]
"""GroupNorm in every backbone layer, 8 groups (2-16 channels a group at width 1/4)."""
ARMS = {
    "tsm": ("rfcn_synth_tsm", []),
    "tsn": ("rfcn_synth_tsn", []),
    "tsn_single_frame": ("rfcn_synth_tsn_single_frame", []),
    "tsm_gn": ("rfcn_synth_tsm", GROUP_NORM),
    "tsn_single_frame_gn": ("rfcn_synth_tsn_single_frame", GROUP_NORM),
}
"""The detectors one can train here: a bundled config and config overrides. ``tsm`` and ``tsn``
are ``tsm demo``'s arms (TSN on the same 4-frame clips, shift off); ``tsn_single_frame`` the
paper's single-frame TSN; ``*_gn`` the same with GroupNorm instead of BatchNorm (a
normalisation that does not depend on the batch; with it and the key-frame loss a TSN clip's
other frames change nothing, so the single-frame TSN stands for both TSNs)."""
SETTING = dict(iters=900, batch=1, train_videos=24, val_videos=16, width=160, height=128)
SEED = 4  # tsm demo's first detection seed


CLIP_LOSS = ["model.loss_frames=clip"]
"""The clip-loss variant (losses on all frames of a clip) as config overrides."""


def run(
    arm: str,
    seed: int,
    tmp: Path,
    iters: int,
    batch: int,
    train_videos: int,
    val_videos: int,
    width: int,
    height: int,
    split: str = "test",
    clip_loss: bool = False,
    motion_blur: float = MOTION_BLUR,
) -> dict:
    """Train ``arm`` (a key of ``ARMS``) on the synthetic VID set (data seed 0) with training
    seed ``seed`` (``clip_loss``: the clip-loss variant), test it on ``split`` (val or the
    held-out test snippets; ``motion_blur``: the set's streak length over speed); the test's
    ``metrics.json``. A run whose ``final.pth`` is in
    ``tmp`` is tested again, not retrained."""
    name, overrides = ARMS[arm]
    config = str(CONFIGS / f"{name}.py")
    blur = "" if motion_blur == MOTION_BLUR else f"_blur{motion_blur:g}"
    root = generate(
        tmp / f"vid_{train_videos}_{val_videos}_{width}x{height}{blur}",
        train_videos=train_videos,
        val_videos=val_videos,
        seed=0,
        width=width,
        height=height,
        motion_blur=motion_blur,
    )
    work = tmp / f"{arm}_s{seed}_i{iters}_b{batch}_{train_videos}_{width}_c{int(clip_loss)}{blur}"
    size = f"img_scale={width},{height}"
    # the configs' schedule: 50 warm-up iterations, then cosine to max_iters
    opts = [
        f"data_root={root}/",
        size,
        f"randomness.seed={seed}",
        f"train_cfg.max_iters={iters}",
        f"param_scheduler.1.end={iters}",
        f"train_dataloader.batch_size={batch}",
        "default_hooks.checkpoint.interval=100000",
        "default_hooks.logger.interval=100",
        *overrides,
        *(CLIP_LOSS if clip_loss else []),
    ]
    if not (work / "final.pth").is_file():
        assert (
            tsm(["detect", "train", config, "--work-dir", str(work), "--cfg-options", *opts]) == 0
        )
    out = work / f"test_{split}" / "results.json"
    assert (
        tsm(
            [
                "detect",
                "test",
                config,
                str(work / "final.pth"),
                "--out",
                str(out),
                "--cfg-options",
                f"data_root={root}/",
                size,
                f"test_dataloader.dataset.ann_file=ImageSets/VID/{split}.txt",
                *overrides,
            ]
        )
        == 0
    )
    return json.loads((out.parent / "metrics.json").read_text())


# measured at commit 4b5331b (OMP_NUM_THREADS=1 .venv/bin/python
# tests/test_detection/test_science_regression.py 4 5 6 --keep /tmp/arms; 2 shared cores, two
# runs side by side), held-out test snippets, mAP TSM - TSN on the corrupted frames (glare
# frames; fast motion; clean; overall), to 0.1 (differences of the unrounded figures):
#   seed 4: 78.8 / 69.5 = +9.2 (glare 50.4 / 38.0 = +12.4; fast -1.4; clean -1.7; all +1.3)
#   seed 5: 79.6 / 72.0 = +7.7 (glare 84.2 / 46.8 = +37.4; fast -0.8; clean -1.4; all +1.5)
#   seed 6: 81.5 / 69.6 = +11.9 (glare 70.9 / 45.5 = +25.4; fast +9.5; clean +6.0; all +7.8)
# Each margin is about half the smallest lead of the three seeds, so a change that takes half
# the lead away fails. Fast motion and clean frames change sign with the seed and overall is
# within seed noise: not guarded. Against the single-frame TSN (``--arms tsm tsn_single_frame``)
# the leads were +8.6 / +22.1 / +17.3 on corrupted and +23.6 / +55.3 / +54.3 on glare frames,
# partly a difference of BatchNorm batches (docs/results.md section 4.9). The setting (900
# iterations of one clip) was chosen on seeds 0-3 with earlier code (loss on all 4 frames, no
# object blur, val snippets): there 600 iterations were not reliable (the corrupted-frame lead
# changed sign at seed 1). About 100 s of CPU per model and seed on a quiet machine.
MARGIN = 4.0
GLARE_MARGIN = 6.0


@pytest.mark.slow
def test_online_tsm_beats_tsn_on_corrupted_frames(tmp_path):
    torch.set_num_threads(1)
    tsm_m, tsn_m = (run(m, SEED, tmp_path, **SETTING) for m in ("tsm", "tsn"))
    figures = {
        k: (tsm_m[k], tsn_m[k]) for k in ("mAP_corrupted", "mAP_corrupted_glare", "mAP_clean")
    }
    assert tsm_m["mAP_corrupted"] - tsn_m["mAP_corrupted"] >= MARGIN, figures
    assert tsm_m["mAP_corrupted_glare"] - tsn_m["mAP_corrupted_glare"] >= GLARE_MARGIN, figures


if __name__ == "__main__":
    import argparse
    import tempfile
    import time

    p = argparse.ArgumentParser(description="re-measure the margins: seeds, and the setting")
    p.add_argument("seeds", nargs="*", type=int, default=[0])
    for k, v in SETTING.items():
        p.add_argument(f"--{k.replace('_', '-')}", type=int, default=v)
    p.add_argument("--split", default="test", choices=("val", "test"))
    p.add_argument("--clip-loss", action="store_true", help="the clip-loss variant")
    p.add_argument("--motion-blur", type=float, default=MOTION_BLUR, help="the set's blur")
    p.add_argument("--arms", nargs="+", default=["tsm", "tsn"], choices=tuple(ARMS))
    p.add_argument("--keep", help="a folder to keep the sets and runs in (reused)")
    a = p.parse_args()
    setting = {k: getattr(a, k) for k in SETTING}
    torch.set_num_threads(1)
    keys = (
        "mAP",
        "mAP_slow",
        "mAP_medium",
        "mAP_fast",
        "mAP_corrupted",
        "mAP_clean",
        "mAP_corrupted_occlusion",
        "mAP_corrupted_glare",
        "mAP_corrupted_blur",
    )
    with tempfile.TemporaryDirectory() as d:
        for seed in a.seeds:
            res = {}
            for m in a.arms:
                t0 = time.time()
                res[m] = run(
                    m,
                    seed,
                    Path(a.keep or d),
                    **setting,
                    split=a.split,
                    clip_loss=a.clip_loss,
                    motion_blur=a.motion_blur,
                )
                print(
                    f"RESULT {setting} {a.split} clip_loss={a.clip_loss} blur={a.motion_blur:g} seed {seed} {m}: "
                    + " ".join(f"{k} {res[m].get(k) or 0:.1f}" for k in keys)
                    + f" in {time.time() - t0:.0f} s",
                    flush=True,
                )
            if {"tsm", "tsn"} <= set(res):
                print(
                    f"RESULT seed {seed}: corrupted gain "
                    f"{res['tsm']['mAP_corrupted'] - res['tsn']['mAP_corrupted']:+.1f}",
                    flush=True,
                )
