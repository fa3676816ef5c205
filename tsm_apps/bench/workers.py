"""Figures measured across processes: ``torchrun`` workers on this machine (``--standalone``,
gloo on CPU, one thread each), of which rank 0 writes the figure to a JSON file (the ranks share
one stdout pipe, where their lines can interleave)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from ..io import read_json


def run_workers(module: str, args: list, nproc: int = 2, timeout_s: float = 1200.0):
    """Run ``python -m module *args --out FILE`` as ``nproc`` torchrun workers and return what
    rank 0 wrote to ``FILE``; RuntimeError with torchrun's last error lines when it wrote none."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "rank0.json"
        cmd = [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--standalone",
            f"--nproc-per-node={nproc}",
            "-m",
            module,
            *map(str, args),
            "--out",
            str(out),
        ]
        env = dict(os.environ, OMP_NUM_THREADS="1")
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout_s)
        if r.returncode != 0 or not out.is_file():
            raise RuntimeError(
                f"torchrun exited {r.returncode} without rank 0's figure: {r.stderr[-2000:]}"
            )
        return read_json(out)
