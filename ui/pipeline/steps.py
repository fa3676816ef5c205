"""A resumable pipeline of ``tsm`` steps, each skipped when its outputs already exist.

Each step runs a ``tsm`` sub-command in a child process (so the demo never imports mmdet into
``tsm_apps``). A step counts as done only when all of its outputs exist; the sub-commands write
their outputs atomically, so an interrupted step simply runs again. Steps of one *stage* run
side by side (e.g. the TSN and TSM trainings, one thread each on a 2-core machine); their output
lines are prefixed with the step's name.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Sequence

from tsm_apps import cli as tsm_cli

_PROGRESS_EVERY_S = 15.0  # a side-by-side step's progress-bar updates are shown this often


@dataclass
class Step:
    name: str
    args: Sequence[str]          # arguments of the ``tsm`` command
    outputs: Sequence[Path]      # the step is done when every one exists
    env: dict = field(default_factory=dict)
    program: Sequence[str] = ()  # default: ``python -m tsm_apps.cli`` (the ``tsm`` command)

    def done(self) -> bool:
        return all(Path(p).exists() for p in self.outputs)

    def command(self) -> list:
        program = list(self.program) or [sys.executable, "-m", tsm_cli.__name__]
        return [*program, *map(str, self.args)]


class StepFailed(RuntimeError):
    pass


def _relay(name: str, stream: IO[bytes], log: IO[str]) -> None:
    """Copy a child's output to stdout, prefixed; throttle carriage-return progress updates."""
    last = 0.0
    buf = b""
    while True:
        chunk = stream.read1(4096) if hasattr(stream, "read1") else stream.read(4096)
        if not chunk:
            break
        buf += chunk
        parts = re.split(rb"(\r|\n)", buf)
        buf = parts.pop()  # the unfinished tail
        for text, sep in zip(parts[0::2], parts[1::2]):
            line = text.decode(errors="replace").rstrip()
            log.write(line + "\n")
            if not line:
                continue
            now = time.monotonic()
            if sep == b"\n" or now - last >= _PROGRESS_EVERY_S:
                last = now if sep == b"\r" else last
                print(f"  [{name}] {line}", flush=True)
    if buf.strip():
        print(f"  [{name}] {buf.decode(errors='replace').rstrip()}", flush=True)
        log.write(buf.decode(errors="replace"))


def _run_parallel(steps: Sequence[Step], log_dir: Path) -> dict:
    log_dir.mkdir(parents=True, exist_ok=True)
    procs = []
    for step in steps:
        log = open(log_dir / f"{step.name.replace(' ', '_')}.log", "w")
        p = subprocess.Popen(step.command(), env={**os.environ, **step.env},
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        t = threading.Thread(target=_relay, args=(step.name, p.stdout, log), daemon=True)
        t.start()
        procs.append((step, p, t, log, time.perf_counter()))
    codes = {}
    for step, p, t, log, t0 in procs:
        codes[step.name] = (p.wait(), time.perf_counter() - t0)
        t.join()
        log.close()
    return codes


def run_steps(stages: Sequence[Step | Sequence[Step]], log_dir: Path | None = None) -> dict:
    """Run the steps that are not done, stage by stage; return ``{name: seconds or 'reused'}``.

    ``stages`` holds steps or lists of steps (run side by side). Raises :class:`StepFailed`
    naming the step, its exit code, its missing outputs and its log.
    """
    log_dir = Path(log_dir or "runs/logs")
    timing: dict = {}
    flat = [[s] if isinstance(s, Step) else list(s) for s in stages]
    total = sum(len(g) for g in flat)
    i = 0
    for group in flat:
        todo = []
        for step in group:
            i += 1
            head = f"[demo {i}/{total}] {step.name}"
            if step.done():
                print(f"{head}: reused ({', '.join(str(p) for p in step.outputs)})", flush=True)
                timing[step.name] = "reused"
            else:
                print(f"{head}: tsm {' '.join(map(str, step.args))}", flush=True)
                todo.append(step)
        if len(todo) == 1:
            t0 = time.perf_counter()
            rc = subprocess.run(todo[0].command(), env={**os.environ, **todo[0].env}).returncode
            codes = {todo[0].name: (rc, time.perf_counter() - t0)}
        elif todo:
            codes = _run_parallel(todo, log_dir)
        else:
            codes = {}
        for step in todo:
            rc, secs = codes[step.name]
            if rc != 0 or not step.done():
                missing = [str(p) for p in step.outputs if not Path(p).exists()]
                where = f"; log: {log_dir / (step.name.replace(' ', '_') + '.log')}" \
                    if len(todo) > 1 else ""
                raise StepFailed(f"step '{step.name}' failed (exit {rc}; missing outputs "
                                 f"{missing}){where}")
            timing[step.name] = secs
            print(f"[demo] {step.name}: done in {secs:.0f} s", flush=True)
    return timing


def merge_timing(previous: dict, current: dict) -> dict:
    """``{step: {"seconds", "reused"}}`` for ``timing.json``: the seconds of the steps that ran
    now, and for a reused step the seconds it took when it last ran (from ``previous``, in this
    format or the older ``{step: seconds or 'reused'}``; None when unknown)."""
    out = {}
    for name, value in current.items():
        if value != "reused":
            out[name] = {"seconds": float(value), "reused": False}
            continue
        old = previous.get(name)
        secs = old.get("seconds") if isinstance(old, dict) else old
        out[name] = {"seconds": float(secs) if isinstance(secs, (int, float)) else None,
                     "reused": True}
    return out
