"""Training logs of the main process: ``metrics.csv``, TensorBoard events and a progress bar.

``metrics.csv`` columns: ``epoch, step, split, loss, top1, top5, lr, clips_per_s, wall_s,
syncs, sync_bytes`` (top-1/top-5 in percent; ``syncs`` / ``sync_bytes``: the synchronisations
of the processes' models in a ``train`` row's epoch and the bytes each process sent into
their all-reduces; blank where not measured). The file is rewritten atomically on every
write; on resume, rows past the resumed step are dropped so the log reads as one run.
"""

from __future__ import annotations

import csv
import io
import os
import time
import warnings
from pathlib import Path
from typing import Iterable, Optional

from ..io import atomic_write_text
from ..progress import progress_bar

COLUMNS = (
    "epoch",
    "step",
    "split",
    "loss",
    "top1",
    "top5",
    "lr",
    "clips_per_s",
    "wall_s",
    "syncs",
    "sync_bytes",
)


class MetricsLog:
    """Rows to ``<work_dir>/metrics.csv`` and scalars to ``<work_dir>/tb`` (rank 0 only)."""

    def __init__(
        self,
        work_dir: str | os.PathLike,
        enabled: bool = True,
        tensorboard: bool = True,
        resume_step: Optional[int] = None,
    ) -> None:
        self.path = Path(work_dir) / "metrics.csv"
        self.enabled = enabled
        self.rows: list = []
        self.writer = None
        if not enabled:
            return
        if resume_step is not None and self.path.is_file():
            with open(self.path, newline="") as f:
                self.rows = [r for r in csv.DictReader(f) if int(r["step"]) <= resume_step]
        if tensorboard:
            self.writer = _summary_writer(Path(work_dir) / "tb", resume_step)

    def write(self, **row: object) -> None:
        """One row; unknown keys raise ``KeyError``, missing ones are left blank."""
        if not self.enabled:
            return
        unknown = set(row) - set(COLUMNS)
        if unknown:
            raise KeyError(f"unknown metrics columns {sorted(unknown)}; expected {COLUMNS}")
        self.rows.append({k: _fmt(row.get(k)) for k in COLUMNS})
        self._flush()
        if self.writer is not None:
            for k in ("loss", "top1", "top5", "lr", "clips_per_s"):
                if row.get(k) is not None:
                    self.writer.add_scalar(f"{row['split']}/{k}", float(row[k]), int(row["step"]))
            self.writer.flush()

    def _flush(self) -> None:
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
        w.writeheader()
        w.writerows(self.rows)
        atomic_write_text(self.path, buf.getvalue())

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None


def _fmt(v: object) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


def _summary_writer(log_dir: Path, resume_step: Optional[int]):
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:
        warnings.warn("tensorboard is not installed: no TensorBoard events (metrics.csv only)")
        return None
    return SummaryWriter(str(log_dir), purge_step=resume_step)


class TrainingBar:
    """The training bar (:func:`~tsm_apps.progress.progress_bar`, one step a batch) with
    ``loss``, ``lr`` and ``clips/s``; a context."""

    def __init__(self, total: int, enabled: bool, desc: str, every_s: float = 0.5) -> None:
        self.bar = progress_bar(desc=desc, total=total, unit="step", enabled=enabled)
        self.enabled, self.every_s, self.shown = enabled, every_s, float("-inf")

    def update(self, loss, lr: float, clips_per_s: float) -> None:
        """One step; the figures are redrawn at most every ``every_s`` seconds (``loss``, a
        float or a device scalar, is read only then: reading it waits for the GPU)."""
        now = time.monotonic()
        if self.enabled and now - self.shown >= self.every_s:
            self.shown = now
            self.bar.set_postfix(
                loss=f"{float(loss):.4f}",
                lr=f"{lr:.3g}",
                clips_s=f"{clips_per_s:.1f}",
                refresh=False,
            )
        self.bar.update(1)

    def __enter__(self) -> "TrainingBar":
        return self

    def __exit__(self, *exc: Iterable) -> None:
        self.bar.close()
