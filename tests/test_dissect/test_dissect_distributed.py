"""``torchrun -m tsm_apps.cli dissect run`` with 2 gloo processes on CPU against the same job
in one process (in pytest's process, one thread like torchrun's workers):

* CAM: metrics.json and units.json byte for byte equal;
* Grad-CAM: rank 1 killed after its first clip; the others' finished clips stay, a re-run
  redoes none of them, completes the rest, and its metrics.json equals the single-process one
  except the counts of what this invocation did (processed now / skipped)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from dissect_fixtures import AS_STORED, tiny_model, write_tiny_set
from tsm_apps.checkpoint.reading import save_checkpoint

HERE = Path(__file__).parent
CLIPS = 5  # split 3 / 2 between two ranks


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = write_tiny_set(tmp_path_factory.mktemp("data"), n=CLIPS)
    save_checkpoint(root / "tsm.pth", tiny_model("offline"), meta=AS_STORED)
    return root


def _single(data, out, method):
    from dissect.job import run_job
    from dissect.job_config import JobConfig

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        run_job(
            JobConfig(
                checkpoint=str(data / "tsm.pth"),
                data=str(data),
                out=str(out),
                method=method,
                overlays=False,
                unit_clips=4,
            ),
            progress=False,
        )
    finally:
        torch.set_num_threads(threads)


def _run(data, out, method, nproc=0, script=None, env_extra=None):
    args = [
        "dissect",
        "run",
        "--checkpoint",
        str(data / "tsm.pth"),
        "--data",
        str(data),
        "--out",
        str(out),
        "--method",
        method,
        "--no-progress",
        "--no-overlays",
        "--unit-clips",
        "4",
    ]
    if nproc:
        launch = [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--standalone",
            "--nproc-per-node",
            str(nproc),
        ]
        cmd = launch + ([str(script)] if script else ["-m", "tsm_apps.cli"]) + args
    else:
        cmd = [sys.executable, "-m", "tsm_apps.cli"] + args
    env = dict(os.environ, OMP_NUM_THREADS="1", **(env_extra or {}))
    env.pop("RANK", None), env.pop("WORLD_SIZE", None)
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)


def _records(out):
    """Finished clips (a write killed midway may leave a hidden temporary file)."""
    return [p for p in (out / "clips").iterdir() if not p.name.startswith(".")]


def _ok(proc):
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def _without_invocation_counts(metrics_path):
    m = json.loads(metrics_path.read_text())
    for k in ("processed_now", "skipped_existing", "failed_now"):
        m["counts"].pop(k)
    return m


@pytest.mark.slow
def test_two_processes_write_the_single_process_metrics(data, tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    _single(data, one, "cam")
    out = _ok(_run(data, two, "cam", nproc=2))
    assert "3 processed" in out and "2 processed" in out  # both ranks worked
    assert (two / "metrics.json").read_bytes() == (one / "metrics.json").read_bytes()
    assert (two / "units.json").read_bytes() == (one / "units.json").read_bytes()
    assert sorted(p.name for p in (two / "clips").iterdir()) == sorted(
        p.name for p in (one / "clips").iterdir()
    )


@pytest.mark.slow
def test_killed_rank_leaves_finished_clips_and_rerun_completes_the_rest(data, tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    _single(data, one, "gradcam")
    dead = _run(
        data, two, "gradcam", nproc=2, script=HERE / "rank_dies.py", env_extra={"DIE_RANK": "1"}
    )
    assert dead.returncode != 0
    done = {p.name: p.stat().st_mtime_ns for p in _records(two)}
    # rank 1 finished one clip of its two before dying; rank 0 (3 clips) may be stopped early
    assert "videos__val_00001.json" in done and "videos__val_00003.json" not in done
    assert not (two / "metrics.json").exists()
    _ok(_run(data, two, "gradcam", nproc=2))
    for name, mtime in done.items():  # finished clips not redone
        assert (two / "clips" / name).stat().st_mtime_ns == mtime
    assert len(_records(two)) == CLIPS
    assert _without_invocation_counts(two / "metrics.json") == _without_invocation_counts(
        one / "metrics.json"
    )
    m = json.loads((two / "metrics.json").read_text())["counts"]
    assert m["processed_now"] == CLIPS - len(done) and m["skipped_existing"] == len(done)
