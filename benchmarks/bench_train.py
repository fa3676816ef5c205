"""The training recipes' runs (docs/results.md §3, §9) on the synthetic temporal set, side by
side in one table.

Runs (each a ``tsm train`` process, or two under ``torchrun``, with the ``synthetic`` preset):

- ``tsn``      the 2D baseline (shift none), 1 process
- ``tsm``      offline TSM, 1 process
- ``tsm_mg``   offline TSM with the multigrid long + short cycles, 1 process
- ``tsm_mg_t4`` the same with a long cycle that keeps T >= 4 and the batch held at the base
  size (``--epochs`` x the epoch factor 1.5 epochs, as every multigrid run)
- ``ddp``      offline TSM, 2 gloo processes, synchronous DDP (same global batch)
- ``kavg``     offline TSM, 2 gloo processes, K-step model averaging (``--k``; the adaptive batch
  by ``--adaptive-rule``: Algorithm 1's ``factor``, the default, or the prose's ``margin``)
- ``tsm_online`` TSM with the online (causal) shift, 1 process (for ``tsm test --online``)
- ``flow_tsn`` / ``flow_tsm`` the Flow modality (``--flow-data``: ``tsm flow extract`` output)

``--train-args`` is appended to every ``tsm train`` command (e.g. ``"--size 64 --epochs 12"``).

and prints val top-1 (best epoch and last), wall time, the synchronisations of the processes'
models and the bytes each process sent into them, and the derived ratios: multigrid speed-up
(wall of ``tsm`` / wall of ``tsm_mg``), K-step averaging's accuracy gap to DDP and its
reductions of synchronisations and of bytes (``ddp`` / ``kavg``).

    .venv/bin/python benchmarks/bench_train.py --data runs/demo/data/temporal --out runs/bench_train

``--cores 0,1`` pins every run to those CPU cores (``taskset``), so that runs started side by
side on a bigger machine each see the 2 cores this project's machines have. Finished runs
(``summary.json`` present) are reused; ``--fresh`` re-runs them. Results: ``<out>/table.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from queue import Queue

from tsm_apps.io import atomic_write_json, atomic_write_text, read_json

RUNS = {
    "tsn": (1, ["--shift", "none"]),
    "tsm": (1, ["--shift", "offline"]),
    "tsm_mg": (1, ["--shift", "offline", "--multigrid"]),
    # T >= 4 in the long cycle, batch held at the base (480 clips / 30 steps = 16)
    "tsm_mg_t4": (
        1,
        [
            "--shift",
            "offline",
            "--multigrid",
            "--mg-long-factors",
            "0.5,0.7071;0.5,1;1,0.7071;1,1",
            "--mg-min-steps",
            "30",
        ],
    ),
    "ddp": (2, ["--shift", "offline"]),
    "kavg": (2, ["--shift", "offline", "--averaging", "kavg"]),
    "tsm_online": (1, ["--shift", "online"]),
    "flow_tsn": (1, ["--shift", "none", "--modality", "flow"]),
    "flow_tsm": (1, ["--shift", "offline", "--modality", "flow"]),
}


def command(
    name: str,
    data: Path,
    out: Path,
    seed: int,
    k: int,
    cores: str | None,
    b2: int = 2,
    opts: argparse.Namespace | None = None,
) -> list:
    procs, extra = RUNS[name]
    if name == "kavg":
        extra = extra + ["--k", str(k), "--b2", str(b2)]
        if opts is not None and opts.adaptive_rule:
            extra = extra + ["--adaptive-rule", opts.adaptive_rule]
    if opts is not None:
        extra = extra + shlex.split(opts.train_args or "")
        if "flow" in extra and opts.flow_data:
            data = opts.flow_data
    train = [
        "tsm_apps.cli",
        "train",
        "--data",
        str(data),
        "--preset",
        "synthetic",
        "--seed",
        str(seed),
        "--out",
        str(out / name),
        "--no-progress",
        "--json",
        *extra,
    ]
    if procs == 1:
        cmd = [sys.executable, "-m", *train]
    else:
        cmd = [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--standalone",
            "--nproc-per-node",
            str(procs),
            "-m",
            *train,
        ]
    return (["taskset", "-c", cores] if cores else []) + cmd


def run_one(
    name: str,
    data: Path,
    out: Path,
    seed: int,
    k: int,
    cores: str | None,
    b2: int = 2,
    opts: argparse.Namespace | None = None,
) -> dict:
    done = out / name / "summary.json"
    if done.is_file():
        return read_json(done)
    (out / name).mkdir(parents=True, exist_ok=True)
    env = dict(
        os.environ,
        OMP_NUM_THREADS="1" if RUNS[name][0] > 1 else os.environ.get("OMP_NUM_THREADS", "2"),
    )
    log = out / name / "stdout.log"
    with open(log, "w") as f:
        r = subprocess.run(
            command(name, data, out, seed, k, cores, b2, opts),
            stdout=f,
            stderr=subprocess.STDOUT,
            env=env,
        )
    lines = [ln for ln in log.read_text().splitlines() if ln.startswith("{")]
    if r.returncode != 0 or not lines:
        raise RuntimeError(f"run {name} failed (exit {r.returncode}); see {log}")
    summary = json.loads(lines[-1])
    atomic_write_text(done, json.dumps(summary, indent=1))
    return summary


def table(res: dict) -> tuple[list, dict]:
    rows = [
        "| run | processes | epochs | steps | val top-1 best (%) | val top-1 last (%) | "
        "wall (s) | synchronisations | sync MB per process |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, s in res.items():
        rows.append(
            f"| {name} | {RUNS[name][0]} | {s['epochs']} | {s['steps']} | "
            f"{s['best_top1']:.1f} | {s['val_top1']:.1f} | {s['wall_s']:.0f} | "
            f"{s.get('syncs', 0)} | {s['sync_allreduce_bytes'] / 1e6:.1f} |"
        )
    ratios = {}
    for mg in ("tsm_mg", "tsm_mg_t4"):
        if "tsm" in res and mg in res:
            t, m = res["tsm"], res[mg]
            ratios[f"multigrid speed-up (wall tsm / wall {mg})"] = t["wall_s"] / m["wall_s"]
            ratios[f"multigrid top-1 gap ({mg} - tsm, best)"] = m["best_top1"] - t["best_top1"]
            ratios[f"multigrid top-1 gap ({mg} - tsm, last)"] = m["val_top1"] - t["val_top1"]
    if "tsm" in res and "tsn" in res:
        ratios["TSM - TSN top-1 (best)"] = res["tsm"]["best_top1"] - res["tsn"]["best_top1"]
    if "ddp" in res and "kavg" in res:
        d, k = res["ddp"], res["kavg"]
        ratios["kavg top-1 gap (kavg - ddp, best)"] = k["best_top1"] - d["best_top1"]
        ratios["synchronisation reduction (ddp / kavg)"] = d["syncs"] / max(k["syncs"], 1)
        ratios["byte reduction (ddp / kavg)"] = d["sync_allreduce_bytes"] / max(
            k["sync_allreduce_bytes"], 1
        )
    return rows, ratios


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", required=True, type=Path, help="synthetic temporal set folder")
    p.add_argument("--out", default=Path("runs/bench_train"), type=Path)
    p.add_argument("--runs", default=",".join(RUNS), help=f"subset of {','.join(RUNS)}")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--k", type=int, default=8, help="kavg: local steps between averaging rounds")
    p.add_argument(
        "--b2",
        type=int,
        default=2,
        help="kavg: batch growth factor when val top-1 stalls (1: fixed batch)",
    )
    p.add_argument(
        "--cores",
        default=None,
        help="';'-separated taskset core lists, one per parallel slot, e.g. '0,1;2,3'",
    )
    p.add_argument("--fresh", action="store_true", help="ignore finished runs")
    p.add_argument(
        "--adaptive-rule",
        choices=("factor", "margin"),
        default=None,
        help="kavg: Algorithm 1's factor rule (tsm train's default) or the margin",
    )
    p.add_argument("--train-args", default="", help="appended to every tsm train command")
    p.add_argument(
        "--flow-data", type=Path, default=None, help="flow runs: the tsm flow extract output folder"
    )
    a = p.parse_args(argv)
    names = [n for n in a.runs.split(",") if n]
    unknown = [n for n in names if n not in RUNS]
    if unknown:
        print(
            f"bench_train: error: unknown run(s) {unknown}; choose from {list(RUNS)}",
            file=sys.stderr,
        )
        return 2
    if not (a.data / "train.txt").is_file():
        print(
            f"bench_train: error: {a.data}/train.txt not found (tsm synth temporal --out DIR)",
            file=sys.stderr,
        )
        return 2
    if a.fresh:
        for n in names:
            shutil.rmtree(a.out / n, ignore_errors=True)
    free: Queue = Queue()
    for cores in a.cores.split(";") if a.cores else [None]:
        free.put(cores)

    def on_free_slot(name: str) -> dict:
        cores = free.get()  # a slot runs one run at a time
        try:
            return run_one(name, a.data, a.out, a.seed, a.k, cores, a.b2, a)
        finally:
            free.put(cores)

    with ThreadPoolExecutor(free.qsize()) as pool:
        futures = {n: pool.submit(on_free_slot, n) for n in names}
        res = {n: f.result() for n, f in futures.items()}
    rows, ratios = table(res)
    print("\n".join(rows))
    for k_, v in ratios.items():
        print(f"{k_}: {v:.2f}")
    out = a.out / "table.json"
    atomic_write_json(out, {"runs": res, "ratios": ratios})
    print(f"-> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
