"""CPU cost of one training clip of the ``kinetics`` preset from mp4, as a loader worker pays it.

    .venv/bin/python benchmarks/bench_clip_cpu.py [--videos 64] [--out clip_cpu.json]

Writes the data-path bench's set (:func:`tsm_apps.bench.data_path_setting.write_videos`: 340x256
H.264, 96 frames at 25 fps) to a temporary folder and reads every training clip (dense
sampling, multi-scale crop to 224, 8 frames) in this process with one torch thread, as a
``DataLoader`` worker does, in four forms: normalised in the worker (float32) or left uint8
(normalised on the device), each decoded with one decoder thread (the loader's workers) or
FFmpeg's choice (one per core). Every video is indexed once first (its demux is cached), and
the four forms of a clip are read one after the other, in a rotating order. Prints the median
wall and CPU (all threads of the process) milliseconds a clip of each form and the load.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

from tsm_apps.bench.data_path import bench_config
from tsm_apps.bench.data_path_setting import Setting, write_videos
from tsm_apps.bench.timing import load_average
from tsm_apps.data.decoder import set_decode_threads
from tsm_apps.train.run import clip_sets


def parse(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--videos", type=int, default=64, help="training videos (a multiple of 8)")
    p.add_argument("--out", default="", help="also write the figures here (JSON)")
    return p.parse_args(argv)


def main(argv=None) -> int:
    a = parse(argv)
    torch.set_num_threads(1)
    setting = Setting(workers=1, warmup=0, steps=max(1, a.videos // 8 - 2))
    load = load_average()
    with tempfile.TemporaryDirectory(prefix="tsm-clip-cpu-") as tmp:
        root = Path(tmp)
        write_videos(root, setting)
        sets = {
            w: clip_sets(bench_config(setting, root, "cpu", w), False, "cpu")[0]
            for w in ("worker", "device")
        }
        forms = [(w, t) for w in sets for t in (1, 0)]
        times: dict = {f: ([], []) for f in forms}
        for i in range(len(sets["worker"])):
            sets["device"][i]  # noqa: B018 - index the video (cached) before timing
            for k in range(len(forms)):
                w, t = forms[(i + k) % len(forms)]
                set_decode_threads(t)
                wall, cpu = time.perf_counter(), time.process_time()
                sets[w][i]  # noqa: B018
                times[(w, t)][0].append(time.perf_counter() - wall)
                times[(w, t)][1].append(time.process_time() - cpu)
    out = {"clips": len(times[forms[0]][0]), "load": [load, load_average()], "forms": {}}
    for (w, t), (wall, cpu) in times.items():
        name = f"normalize {w}, decoder threads {'1' if t else 'auto'}"
        out["forms"][name] = {
            "wall_ms": round(statistics.median(wall) * 1e3, 1),
            "cpu_ms": round(statistics.median(cpu) * 1e3, 1),
        }
    text = json.dumps(out, indent=1)
    print(text)
    if a.out:
        Path(a.out).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
