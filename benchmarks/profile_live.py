"""What one frame of the app's live mode costs on the server, part by part, without a browser.

For the online recognizer (a random-weight ResNet-50 TSM, 400 classes, 224 px, as
``benchmarks/load_app.py`` builds it) on 640x360 frames and for the TSN and online-TSM detectors
(synthetic config) side by side on bikes.mp4 (640x272), the median over FRAMES frames of: the
models' step (what the page's status line calls the models' time), the picture the page gets
(the detectors' boxes drawn on the frames) and its encoding by ``st.image``: of the numpy
array as the live mode passed it before (JPEG at quality 100, decoded and re-encoded at the
shown width) and of the one JPEG at the shown width it passes now
(:func:`ui.app.widgets.draw.shown`). The rest of a frame's wall time on the page -- the script run
per frame, the websocket and the browser -- is what ``benchmarks/load_app.py`` measures
around it (docs/results.md §6.4).

    OMP_NUM_THREADS=2 .venv/bin/python -m benchmarks.profile_live [--frames 20]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path


def _ms(fn, n: int) -> tuple[float, object]:
    """Median milliseconds of ``fn(i)`` over ``i = 0..n-1`` and its last result."""
    times, out = [], None
    for i in range(n):
        t0 = time.perf_counter()
        out = fn(i)
        times.append(1000 * (time.perf_counter() - t0))
    return statistics.median(times), out


def _to_page(image, width: int, ours: bool) -> None:
    """``st.image``'s encoding of one picture shown ``width`` px wide (no runtime: nothing
    stored): of the numpy array (JPEG at quality 100, decoded and re-encoded at the width) or
    of :func:`ui.app.widgets.draw.shown`'s JPEG (passed through)."""
    from streamlit.elements.lib.image_utils import image_to_url
    from streamlit.elements.lib.layout_utils import LayoutConfig

    from ui.app.widgets.draw import shown

    image_to_url(
        shown(image, width) if ours else image,
        LayoutConfig(width=width),
        False,
        "RGB",
        "auto",
        "profile",
    )


def _pictures(images: list, width: int, n: int) -> str:
    numpy, _ = _ms(lambda i: [_to_page(im, width, False) for im in images], n)
    ours, _ = _ms(lambda i: [_to_page(im, width, True) for im in images], n)
    return (
        f"st.image of the array {numpy:.1f} ms, of ui.app.widgets.draw.shown's JPEG {ours:.1f} ms "
        f"({len(images)} picture(s) shown {width} px wide)"
    )


def recognizer(work: Path, n: int) -> None:
    import torch

    from tools.sample_videos import sample_video
    from tsm_apps import build_recognizer, save_checkpoint
    from ui.app import sources
    from ui.app.settings import DecodeLimits
    from ui.app.views.live import FRAME_WIDTH

    torch.manual_seed(1)
    path = save_checkpoint(
        work / "tsm.pth",
        build_recognizer("resnet50", num_classes=400, num_segments=8, shift="offline"),
    )
    frames = sources.read_video(
        sample_video("bigbuckbunny.mp4"), n, DecodeLimits(n, 360, 70_000_000)
    ).frames
    rec = sources.load_online(path)
    live = sources.LiveRecognizer(rec, rec.protocol)
    model, _ = _ms(lambda i: live.step(frames[i]), n)
    print(
        f"online recognizer (ResNet-50, 224 px), {frames.shape[2]}x{frames.shape[1]} frames: "
        f"model {model:.0f} ms a frame (rate {1000 / model:.1f} frames/s); the frame: "
        f"{_pictures([frames[0]], 320, n)} (before); {_pictures([frames[0]], FRAME_WIDTH, n)}"
        " (now)"
    )


def detectors(work: Path, n: int) -> None:
    from tools.random_models import write_detectors
    from tools.sample_videos import sample_video
    from ui.app import sources
    from ui.app.widgets import detection_panels
    from ui.app.widgets.player import ROW_WIDTH

    write_detectors(work / "runs")
    specs = sources.find_detectors(work / "runs")
    frames = sources.read_frames(sample_video("bikes.mp4"), n)
    streams = {
        m: sources.DetectorStream(sources.load_detector(s), iter(frames)) for m, s in specs.items()
    }
    model, dets = _ms(lambda i: {m: next(s) for m, s in streams.items()}, n)
    draw, images = _ms(
        lambda i: [
            detection_panels.render_frame(frames[-1], d.keep(0.3), m) for m, d in dets.items()
        ],
        n,
    )
    print(
        f"both detectors side by side, {frames.shape[2]}x{frames.shape[1]} frames: models "
        f"{model:.0f} ms a frame (rate {1000 / model:.1f} frames/s); boxes drawn "
        f"{draw:.1f} ms; the pictures: {_pictures(images, 560, n)} (before); "
        f"{_pictures(images, ROW_WIDTH // 2, n)} (now)"
    )
    print(f"  the two panels scaled to {ROW_WIDTH // 2} px and encoded: {_encoders(images, n)}")


def _encoders(images: list, n: int) -> str:
    """Milliseconds (median over ``n``) and bytes of the two panels' JPEGs: as the app makes
    them (:func:`ui.app.widgets.draw.shown`: Pillow's bilinear downscale, which filters over the
    scale factor, and Pillow's JPEG at quality 85), and with OpenCV's resize (area or plain
    bilinear, 2x2 taps) and ``cv2.imencode`` at quality 85 and 75."""
    import cv2

    from ui.app.widgets.draw import shown
    from ui.app.widgets.player import ROW_WIDTH

    w = ROW_WIDTH // 2

    def cv(im, interp: int, q: int) -> bytes:
        small = cv2.resize(im, (w, round(im.shape[0] * w / im.shape[1])), interpolation=interp)
        return cv2.imencode(".jpg", small[:, :, ::-1], [cv2.IMWRITE_JPEG_QUALITY, q])[1].tobytes()

    ways = {
        "shown (Pillow, q85)": lambda im: shown(im, w),
        "cv2 INTER_AREA + imencode q85": lambda im: cv(im, cv2.INTER_AREA, 85),
        "cv2 INTER_LINEAR + imencode q85": lambda im: cv(im, cv2.INTER_LINEAR, 85),
        "cv2 INTER_AREA + imencode q75": lambda im: cv(im, cv2.INTER_AREA, 75),
    }
    out = []
    for name, fn in ways.items():
        ms, jpegs = _ms(lambda i: [fn(im) for im in images], n)
        out.append(f"{name} {ms:.2f} ms, {sum(map(len, jpegs)):,} bytes")
    return "; ".join(out)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--frames", type=int, default=20)
    args = p.parse_args()
    import torch

    print(
        f"machine: {os.cpu_count()} CPUs, torch threads {torch.get_num_threads()}; medians "
        f"over {args.frames} frames"
    )
    with tempfile.TemporaryDirectory(prefix="profile_live_") as tmp:
        recognizer(Path(tmp), args.frames)
        detectors(Path(tmp), args.frames)


if __name__ == "__main__":
    main()
