"""``tsm detect``: train, test and run the R-FCN video detectors (mmengine ``Runner``).

    tsm detect train CONFIG [--work-dir DIR] [--cfg-options k=v ...] [--resume [CKPT]]
    tsm detect test CONFIG CHECKPOINT [--out results.json] [--cfg-options k=v ...]
    tsm detect video CONFIG CHECKPOINT VIDEO --out dets.json [--render out.mp4] [--score-thr 0.3]
    tsm detect compare --base TSN_SEED1/results.json ... --other TSM_SEED1/results.json ...

``train`` writes mmengine's log and ``iter_N.pth`` checkpoints into the work folder and, at the
end, ``final.pth`` (plain weights, see :mod:`detection.checkpoint`) and the resolved
``config.py``. Several GPUs or nodes: ``torchrun --nproc-per-node G [--nnodes ...] -m
tsm_apps.cli detect train CONFIG`` (WORLD_SIZE set -> mmengine's ``pytorch`` launcher; NCCL on
CUDA, gloo on CPU). ``--cfg-options data_root=DIR/`` re-points every dataset of the config,
``img_scale=W,H`` (e.g. ``img_scale=256,160``) every ``Resize`` of its pipelines.
``test`` prints the mAP table and writes ``results.json`` (per-frame detections) and
``metrics.json`` beside it (under torchrun too: the configs' ``VideoShardSampler`` gives each
rank whole videos in frame order, as the online stream needs). ``video`` streams a video file or frame folder through the online
detector. ``compare`` reads two arms' ``results.json`` over training seeds and prints, per split,
other - base mAP per seed and its paired-bootstrap 95% interval over the test snippets
(:func:`detection.vid_bootstrap.compare_arms`). Bad input raises ``UserError``/``ValueError``: ``tsm`` prints it and exits 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from statistics import fmean
from typing import Optional

from tsm_apps.distributed import env_from
from tsm_apps.errors import UserError
from tsm_apps.io import atomic_write_text
from tsm_apps.progress import progress_bar


def build_parser() -> argparse.ArgumentParser:
    from .cli_options import build_parser as options_parser

    return options_parser(__doc__.splitlines()[0])


def train(a: argparse.Namespace) -> int:
    from mmengine.dist import is_main_process
    from mmengine.runner import Runner

    from .backbone import check_random_frozen
    from .checkpoint import safe_loading, save_final
    from .hooks import PlainCheckpointHook
    from .runner_config import runner_config
    from .schedule import batch_note

    cfg = runner_config(a.config, a.cfg_options)
    env = env_from()
    note = batch_note(
        cfg.get("solver"), env.world_size, int(cfg.train_dataloader.get("batch_size", 1))
    )
    if note and env.is_main:
        print(f"tsm detect train: {note}", file=sys.stderr)
    bb = cfg.model.get("backbone", {})
    if bb.get("type") == "TSMResNet" and not (a.resume or cfg.get("load_from")):
        check_random_frozen(
            bb.get("checkpoint"),
            bb.get("frozen_stages", -1),
            bb.get("norm_eval", True),
            bb.get("allow_random_frozen", False),
        )
    work = Path(a.work_dir or cfg.get("work_dir") or Path("runs/detection") / Path(a.config).stem)
    cfg.work_dir = str(work)
    if a.resume:
        if a.resume != "auto":
            if not Path(a.resume).is_file():
                raise UserError(f"--resume: checkpoint not found: {a.resume}")
            cfg.load_from = a.resume
        elif not (work / "last_checkpoint").is_file():
            print(
                f"tsm detect train: nothing to resume in {work} (no last_checkpoint); "
                "starting from scratch",
                file=sys.stderr,
            )
        cfg.resume = True
    runner = Runner.from_cfg(cfg)
    runner.register_hook(PlainCheckpointHook())  # checkpoints loadable with weights_only=True
    with safe_loading():
        runner.train()
    if is_main_process():
        classes = (runner.train_dataloader.dataset.metainfo or {}).get("classes")
        save_final(
            work / "final.pth", runner.model, list(classes or []), runner.iter, cfg.pretty_text
        )
        atomic_write_text(work / "config.py", cfg.pretty_text)
        print(f"tsm detect train: wrote {work / 'final.pth'} and {work / 'config.py'}")
    return 0


def test(a: argparse.Namespace) -> int:
    from mmengine.dist import is_main_process
    from mmengine.runner import Runner

    from .checkpoint import load_detector_weights, read_detector_checkpoint, safe_loading
    from .results import format_table, write_metrics
    from .runner_config import runner_config

    out = Path(a.out) if a.out else Path(a.checkpoint).parent / "test" / "results.json"
    if out.suffix != ".json":
        raise UserError(f"--out must be a .json file, got {out}")
    read_detector_checkpoint(a.checkpoint)  # fail fast, naming the file
    cfg = runner_config(a.config, a.cfg_options)
    out.parent.mkdir(parents=True, exist_ok=True)
    cfg.work_dir = str(out.parent)
    cfg.load_from, cfg.resume = None, False
    evaluators = (
        cfg.test_evaluator if isinstance(cfg.test_evaluator, list) else [cfg.test_evaluator]
    )
    cfg.test_evaluator = list(evaluators) + [dict(type="DetectionsDump", out_file=str(out))]
    runner = Runner.from_cfg(cfg)
    load_detector_weights(getattr(runner.model, "module", runner.model), a.checkpoint)
    with safe_loading():
        metrics = runner.test()
    if is_main_process():
        path = write_metrics(out.parent / "metrics.json", metrics)
        print(format_table(metrics, per_class=False))
        print(f"tsm detect test: wrote {out} and {path}")
    return 0


def _video_fps(path: Path) -> Optional[float]:
    from tsm_apps.data.decoder import VideoDecodeError
    from tsm_apps.data.video import frame_rate

    try:
        return frame_rate(path)
    except VideoDecodeError:  # the decoder reports unreadable files with its own message
        return None


def video(a: argparse.Namespace) -> int:
    import numpy as np

    from tsm_apps.data.decoder import VideoDecodeError
    from tsm_apps.data.video import count_frames, read_video_frames
    from tsm_apps.data.video_writer import write_video

    from .inference import draw_detections, load_detector

    path = Path(a.video)
    if not path.exists():
        raise UserError(f"video not found: {path}")
    folder = {
        k: v
        for k, v in (("frame_template", a.frame_template), ("start_index", a.start_index))
        if v is not None
    }
    try:
        n = count_frames(path, exact=True, **folder)
    except VideoDecodeError as e:
        raise UserError(str(e)) from None
    if n == 0:
        raise UserError(
            f"{path}: no frames"
            + (" (frame folder: set --frame-template / --start-index)" if path.is_dir() else "")
        )
    device = None if a.device in (None, "auto") else a.device
    det = load_detector(a.config, a.checkpoint, device, a.cfg_options)
    chunk = 32

    def frames():
        for s in range(0, n, chunk):
            try:
                batch = read_video_frames(path, range(s, min(n, s + chunk)), **folder)
            except VideoDecodeError as e:
                raise UserError(str(e)) from None
            yield from batch

    results, drawn = [], []
    for frame, r in progress_bar(
        zip_frames(frames(), det, a.score_thr),
        total=n,
        desc="detect",
        unit="frame",
        enabled=a.progress,
    ):
        results.append(r.to_dict())
        if a.render:
            drawn.append(draw_detections(frame, r))
    doc = {
        "video": str(path),
        "config": str(a.config),
        "checkpoint": str(a.checkpoint),
        "classes": list(det.classes),
        "score_thr": a.score_thr,
        "frames": results,
    }
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out, json.dumps(doc) + "\n")
    print(f"tsm detect video: {n} frames, {sum(len(r['scores']) for r in results)} boxes -> {out}")
    if a.render:
        clip = np.stack(drawn)
        clip = clip[:, : clip.shape[1] // 2 * 2, : clip.shape[2] // 2 * 2]  # H.264 needs even sizes
        write_video(a.render, clip, a.fps or _video_fps(path) or 25.0)
        print(f"tsm detect video: rendered {a.render}")
    return 0


def zip_frames(frames, detector, score_thr):
    """``(frame, FrameDetections)`` pairs of one online stream over the ``frames`` iterator."""
    from .live import stream_frames

    kept = []

    def tee():
        for f in frames:
            kept.append(f)
            yield f

    for r in stream_frames(detector, tee(), score_thr):
        yield kept.pop(0), r


def compare(a: argparse.Namespace) -> int:
    from .vid_bootstrap import compare_arms, read_results

    if not a.base or not a.other:
        raise UserError("tsm detect compare: --base and --other each need a results.json per seed")
    if len(a.base) != len(a.other):
        raise UserError(
            f"tsm detect compare: {len(a.base)} --base runs but {len(a.other)} --other runs; "
            "give one per training seed in both arms, in the same order"
        )
    for path in [*a.base, *a.other]:
        if not Path(path).is_file():
            raise UserError(f"tsm detect compare: no such results.json: {path}")
    if a.out and Path(a.out).suffix != ".json":
        raise UserError(f"--out must be a .json file, got {a.out}")
    base = [read_results(p) for p in a.base]
    other = [read_results(p) for p in a.other]
    result = compare_arms(base, other, a.keys or None, a.resamples, a.seed)
    for key, r in result.items():
        print(_comparison_line(key, r))
    if a.out:
        atomic_write_text(Path(a.out), json.dumps({"base": a.base, "other": a.other, **result}))
        print(f"tsm detect compare: wrote {a.out}")
    return 0


def _comparison_line(key: str, r: dict) -> str:
    if "unavailable" in r:
        return f"{key}: {r['unavailable']}"
    ci = r["interval"]
    return (
        f"{key}: base {fmean(r['base']):.1f}, other {fmean(r['other']):.1f}, other - base "
        f"{ci['point']:+.1f} (per seed {', '.join(f'{d:+.1f}' for d in r['diff'])}), "
        f"{ci['level']:.0%} CI {ci['low']:+.1f} to {ci['high']:+.1f} over {ci['items']} snippets"
    )


COMMANDS = {"train": train, "test": test, "video": video, "compare": compare}


def main(argv: list[str]) -> int:
    """Entry point of ``tsm detect`` (see the module docstring)."""
    try:
        import mmdet  # noqa: F401
    except ImportError as e:
        raise UserError(f"tsm detect needs mmdet/mmengine/mmcv ({e}); run `make setup`") from None
    a = build_parser().parse_args(argv)
    if a.cmd == "video" and not a.out:
        raise UserError("tsm detect video: --out is required (the detections JSON)")
    return COMMANDS[a.cmd](a)


if __name__ == "__main__":
    from tsm_apps.cli import main as tsm_main

    sys.exit(tsm_main(["detect"] + sys.argv[1:]))
