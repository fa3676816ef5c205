"""A resumable pipeline of ``tsm`` steps, each skipped when its outputs already exist.

Each step runs a ``tsm`` sub-command in a child process (so the demo never imports mmdet into
``tsm_apps``). A step counts as done only when all of its outputs exist; the sub-commands write
their outputs atomically, so an interrupted step simply runs again. Up to ``workers`` steps run
side by side (one thread each on a 2-core machine): a free worker takes the first step, in the
given order, whose ``needs`` are done. Output lines are prefixed with the step's name and
copied to ``<log_dir>/<step>.log``; each step's wall and CPU seconds are recorded (the CPU
seconds do not depend on what else the machine runs).
"""

from __future__ import annotations

import os
import queue
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
    args: Sequence[str]  # arguments of the ``tsm`` command
    outputs: Sequence[Path]  # the step is done when every one exists
    env: dict = field(default_factory=dict)
    program: Sequence[str] = ()  # default: ``python -m tsm_apps.cli`` (the ``tsm`` command)
    needs: Sequence[str] = ()  # names of the steps that must finish first

    def done(self) -> bool:
        return all(Path(p).exists() for p in self.outputs)

    def command(self) -> list:
        program = list(self.program) or [sys.executable, "-m", tsm_cli.__name__]
        return [*program, *map(str, self.args)]

    @property
    def log_name(self) -> str:
        return self.name.replace(" ", "_") + ".log"


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


def _start(step: Step, log_dir: Path, done: "queue.Queue") -> None:
    """Start ``step``; a thread relays its output and then puts ``(step, exit code, wall
    seconds, CPU seconds)`` on ``done`` (CPU: user + system of the child, from ``wait4``)."""
    log = open(log_dir / step.log_name, "w")
    t0 = time.perf_counter()
    p = subprocess.Popen(
        step.command(),
        env={**os.environ, **step.env},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )

    def watch() -> None:
        _relay(step.name, p.stdout, log)
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
        log.close()
        done.put((step, p.returncode, time.perf_counter() - t0, usage.ru_utime + usage.ru_stime))

    threading.Thread(target=watch, daemon=True).start()


def _flatten(stages: Sequence[Step | Sequence[Step]]) -> list:
    return [s for g in stages for s in ([g] if isinstance(g, Step) else g)]


def _check_needs(steps: Sequence[Step]) -> None:
    names = {s.name for s in steps}
    if len(names) != len(steps):
        raise ValueError(f"step names repeat: {[s.name for s in steps]}")
    for s in steps:
        unknown = set(s.needs) - names
        if unknown:
            raise ValueError(f"step '{s.name}' needs unknown steps {sorted(unknown)}")


def run_steps(
    stages: Sequence[Step | Sequence[Step]], log_dir: Path | None = None, workers: int = 2
) -> dict:
    """Run the steps that are not done, up to ``workers`` at a time, each after its ``needs``;
    return ``{name: {"seconds", "cpu_seconds"} or 'reused'}``.

    ``stages`` holds steps or lists of steps (flattened; the order is the priority). Raises
    :class:`StepFailed` naming the step, its exit code, its missing outputs and its log, after
    the steps already running have finished (no new step starts after a failure).
    """
    log_dir = Path(log_dir or "runs/logs")
    log_dir.mkdir(parents=True, exist_ok=True)
    steps = _flatten(stages)
    _check_needs(steps)
    timing: dict = {}
    for i, step in enumerate(steps, 1):
        if step.done():
            print(
                f"[demo {i}/{len(steps)}] {step.name}: reused "
                f"({', '.join(str(p) for p in step.outputs)})",
                flush=True,
            )
            timing[step.name] = "reused"
    todo = [s for s in steps if s.name not in timing]
    number = {s.name: i for i, s in enumerate(steps, 1)}
    done: queue.Queue = queue.Queue()
    running, failed = 0, None
    while todo or running:
        ready = [s for s in todo if all(n in timing for n in s.needs)] if failed is None else []
        while ready and running < max(1, workers):
            step = ready.pop(0)
            todo.remove(step)
            print(
                f"[demo {number[step.name]}/{len(steps)}] {step.name}: tsm "
                f"{' '.join(map(str, step.args))}",
                flush=True,
            )
            _start(step, log_dir, done)
            running += 1
        if not running:
            break
        step, rc, secs, cpu = done.get()
        running -= 1
        if rc != 0 or not step.done():
            missing = [str(p) for p in step.outputs if not Path(p).exists()]
            failed = failed or StepFailed(
                f"step '{step.name}' failed (exit {rc}; missing outputs {missing}); "
                f"log: {log_dir / step.log_name}"
            )
            continue
        timing[step.name] = {"seconds": secs, "cpu_seconds": cpu}
        print(f"[demo] {step.name}: done in {secs:.0f} s ({cpu:.0f} s CPU)", flush=True)
    if failed is not None:
        raise failed
    if todo:
        raise StepFailed(f"steps {[s.name for s in todo]} wait on each other (circular needs)")
    return timing


def merge_timing(previous: dict, current: dict) -> dict:
    """``{step: {"seconds", "cpu_seconds", "reused"}}`` for ``timing.json``: the seconds of the
    steps that ran now, and for a reused step those of when it last ran (from ``previous``, in
    this format or the older ``{step: seconds or 'reused'}``; None when unknown)."""
    out = {}
    for name, value in current.items():
        if value != "reused":
            secs, cpu = (
                (value.get("seconds"), value.get("cpu_seconds"))
                if isinstance(value, dict)
                else (value, None)
            )
            out[name] = {"seconds": float(secs), "cpu_seconds": _number(cpu), "reused": False}
            continue
        old = previous.get(name)
        secs, cpu = (
            (old.get("seconds"), old.get("cpu_seconds")) if isinstance(old, dict) else (old, None)
        )
        out[name] = {"seconds": _number(secs), "cpu_seconds": _number(cpu), "reused": True}
    return out


def _number(v) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None
