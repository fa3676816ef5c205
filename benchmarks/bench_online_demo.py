"""Per-frame latency of our online MobileNetV2 TSM step against the official online demo's
model, like for like (both eager, both from a CUDA graph, both in ONNX Runtime):

    .venv/bin/python benchmarks/bench_online_demo.py \\
        --demo /path/to/temporal-shift-module/online_demo/mobilenet_v2_tsm.py [--device cuda]

The figures of ``tsm bench --official-online-demo PATH`` (:mod:`tsm_apps.bench.official_demo`:
the official file is imported from the path given, never copied here); prints them as one JSON
line. A wrong path: one line on stderr, exit code 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from tsm_apps.bench.official_demo import demo_anchors
from tsm_apps.distributed import auto_device


def main(argv: list) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--demo",
        type=Path,
        required=True,
        help="path of the official online_demo/mobilenet_v2_tsm.py",
    )
    p.add_argument("--device", default=auto_device().type)
    p.add_argument("--rounds", type=int, default=300)
    p.add_argument("--size", type=int, default=224)
    a = p.parse_args(argv)
    try:
        figures = demo_anchors(a.demo, a.device, a.rounds, a.size)
    except ValueError as e:
        print(f"error: --demo {e}", file=sys.stderr)
        return 2
    print(json.dumps([f.to_dict() for f in figures]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
