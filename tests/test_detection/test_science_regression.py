"""The science, guarded: online TSM's R-FCN detects objects on motion-blurred frames (a
camera-shake blur of the whole frame) better than the TSN R-FCN that differs from it only in
the shift, because its shifted channels carry features of the sharp frames before.

Setting (``SETTING``): the bundled ``rfcn_synth_tsm`` / ``rfcn_synth_tsn`` configs unchanged (one
clip of 4 frames per step, the losses on its key frame; TSN on the same clips with the shift
off, so the two differ only in the shift; 900 iterations) on ``tsm synth vid``'s set with 16 val
and 16 test snippets instead of 8 (seed 0: 24 train snippets of 24 frames at 160x128, objects
blurred along their motion), training seed 4, scored on the held-out test snippets (121
corrupted frames: 26 blurred, 19 glare, 76 occluded), one thread -- the detection of ``tsm
demo``'s first seed. Both models are trained and tested through ``tsm detect train`` / ``tsm
detect test``. The margin was measured with seeds 4-6, which took no part in choosing the
setting (see the comment above ``BLUR_MARGIN``). ``--arms`` re-measures other detectors
(``ARMS``: the single-frame TSN, GroupNorm backbones)."""

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


# measured at commit b4725c7 by `tsm demo --no-ui` in a fresh clone (its detection steps are
# this test's runs at seeds 4, 5, 6; 2 cores of an AMD EPYC, the CI's kind of machine), held-out
# test snippets, mAP TSM - TSN, to 0.1 (differences of the unrounded figures):
#   seed 4: blurred 78.0 / 69.9 = +8.0 (+8.04); corrupted -5.5; glare -6.5; occluded -9.9; all -6.7
#   seed 5: blurred 80.4 / 65.5 = +14.9; corrupted +14.3; glare +14.9; occluded +13.2; all +8.0
#   seed 6: blurred 86.2 / 74.4 = +11.8; corrupted +4.4; glare +6.8; occluded +0.5; all +3.3
# and at 953cec8 by `tsm demo --seeds 6` in the same folder (seeds 7, 8, 9):
#   seed 7: blurred 79.9 / 77.0 = +2.9; corrupted +2.4; glare +13.7; occluded -0.0; all +3.0
#   seed 8: blurred 82.4 / 72.9 = +9.5; corrupted +8.5; glare +19.6; occluded +3.9; all +4.3
#   seed 9: blurred 85.1 / 78.4 = +6.7; corrupted +1.7; glare -4.6; occluded +2.3; all +2.3
# The test trains seed 4, deterministic on one machine: the margin is just over half of its lead
# (+8.04 / 2 = 4.02), so a change that takes half the lead away fails. All corrupted frames,
# glare, occlusion, fast motion and overall change sign with the seed on this machine: not
# guarded at one seed (their paired-bootstrap intervals over the seeds are in docs/results.md
# section 1). On another machine (4b5331b, an earlier CPU) the same runs gave corrupted +9.2 /
# +7.7 / +11.9 and glare +12.4 / +37.4 / +25.4 at seeds 4-6: floating point differs between CPUs
# and one seed's training then ends elsewhere. The setting (900 iterations of one clip) was
# chosen on seeds 0-3 with earlier code (loss on all 4 frames, no object blur, val snippets).
# About 200 s of CPU per model and seed on this machine.
BLUR_MARGIN = 4.1


@pytest.mark.slow
def test_online_tsm_beats_tsn_on_blurred_frames(tmp_path):
    torch.set_num_threads(1)
    tsm_m, tsn_m = (run(m, SEED, tmp_path, **SETTING) for m in ("tsm", "tsn"))
    keys = ("mAP_corrupted_blur", "mAP_corrupted", "mAP_corrupted_glare", "mAP_clean")
    figures = {k: (tsm_m[k], tsn_m[k]) for k in keys}
    assert tsm_m["mAP_corrupted_blur"] - tsn_m["mAP_corrupted_blur"] >= BLUR_MARGIN, figures


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
