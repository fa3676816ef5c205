"""Sparse 8-segment sampling from mp4 against decoding every frame (goal: sparse faster).

    .venv/bin/python benchmarks/bench_sampling.py [--videos 4] [--seconds 10] [--fps 25]
        [--height 256] [--width 340] [--segments 8] [--repeats 3] [--keyframe-interval 25]

Writes ``--videos`` H.264 mp4 files of ``--seconds`` seconds (smooth moving texture plus noise,
``--keyframe-interval`` frames between keyframes; 250 is x264's default) in a temporary folder,
then times, per clip, interleaved over ``--repeats`` rounds:

* sparse: ``read_video_frames(path, sample_train(n, T, rng))`` -- demux once for the frame
  index (cold: the index cache is cleared before every clip), seek, decode forward;
* sparse-warm: the same with the per-file index cached (later epochs in one worker);
* full: decode every frame to RGB with PyAV, then pick the sampled ones;
* full-lazy: decode every frame but convert only the sampled ones to RGB (a stronger baseline).

Prints clips/s of each and the ratio sparse / full.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from tsm_apps.data import decoder
from tsm_apps.data.sampling import sample_train
from tsm_apps.data.video import read_video_frames
from tsm_apps.data.video_writer import write_video


def parse(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--videos", type=int, default=4)
    p.add_argument("--seconds", type=float, default=10.0)
    p.add_argument("--fps", type=int, default=25)
    p.add_argument("--height", type=int, default=256)
    p.add_argument("--width", type=int, default=340)
    p.add_argument("--segments", type=int, default=8)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--keyframe-interval", type=int, default=25)
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args(argv)


def make_video(path: Path, n: int, h: int, w: int, fps: int, gop: int, seed: int) -> Path:
    """A drifting smooth texture with mild noise: compresses like camera footage, not like noise."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    fx, fy, ph = rng.uniform(0.02, 0.08, 3), rng.uniform(0.02, 0.08, 3), rng.uniform(0, 6, 3)
    frames = np.empty((n, h, w, 3), np.uint8)
    for t in range(n):
        for c in range(3):
            v = np.sin(fx[c] * (xx + 2 * t) + ph[c]) * np.cos(fy[c] * (yy - t) + ph[c])
            frames[t, :, :, c] = np.clip(127 + 100 * v + rng.normal(0, 4, (h, w)), 0, 255)
    return write_video(path, frames, fps, keyframe_interval=gop)


def decode_all(path: Path, idx: np.ndarray, lazy: bool) -> np.ndarray:
    import av

    wanted = set(idx.tolist())
    with av.open(str(path)) as c:
        stream = c.streams.video[0]
        stream.thread_type = "AUTO"  # the same decoder threading as read_video_frames
        frames = [
            f.to_ndarray(format="rgb24") if (not lazy or i in wanted) else None
            for i, f in enumerate(c.decode(stream))
        ]
    return np.stack([frames[i] for i in idx.tolist()])


def sparse(path: Path, idx: np.ndarray, cold: bool) -> np.ndarray:
    if cold:
        decoder.forget_indexes()
    return read_video_frames(path, idx)


def main(argv=None) -> int:
    a = parse(argv)
    n = int(round(a.seconds * a.fps))
    methods = {
        "sparse": lambda p, i: sparse(p, i, True),
        "sparse-warm": lambda p, i: sparse(p, i, False),
        "full": lambda p, i: decode_all(p, i, False),
        "full-lazy": lambda p, i: decode_all(p, i, True),
    }
    times = {k: 0.0 for k in methods}
    clips = 0
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        paths = [
            make_video(
                Path(tmp) / f"v{k}.mp4",
                n,
                a.height,
                a.width,
                a.fps,
                a.keyframe_interval,
                a.seed + k,
            )
            for k in range(a.videos)
        ]
        print(
            f"wrote {a.videos} videos of {n} frames {a.width}x{a.height} @ {a.fps} fps, "
            f"keyframe every {a.keyframe_interval} frames, in {time.perf_counter() - t0:.1f} s"
        )
        rng = np.random.default_rng(a.seed)
        for _ in range(a.repeats):
            for p in paths:
                idx = sample_train(n, a.segments, rng)
                ref = None
                for name, fn in methods.items():
                    t = time.perf_counter()
                    out = fn(p, idx)
                    times[name] += time.perf_counter() - t
                    if ref is None:
                        ref = out
                    elif not np.array_equal(out, ref):
                        raise SystemExit(f"{name} decoded different pixels than sparse for {p}")
                clips += 1
    rate = {k: clips / v for k, v in times.items()}
    for k, r in rate.items():
        print(f"{k:12s} {r:8.2f} clips/s")
    print(f"ratio sparse / full       = {rate['sparse'] / rate['full']:.2f}x")
    print(f"ratio sparse / full-lazy  = {rate['sparse'] / rate['full-lazy']:.2f}x")
    print(f"ratio sparse-warm / full  = {rate['sparse-warm'] / rate['full']:.2f}x")
    ok = rate["sparse"] > rate["full"]
    print("goal sparse faster than full decoding:", "met" if ok else "NOT met")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
