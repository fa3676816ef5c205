"""The training loop's own state beyond its steps: the checkpoint entries it saves beside the
hooks' (:func:`state_dict`), their restoration from ``last.pth`` on resume (:func:`resume`), and
the summary of a finished run (:func:`summary`: counters, synchronisation totals and the hooks'
entries). Each is a method of :class:`~tsm_apps.train.trainer.Trainer` (``self`` is the trainer).
"""

from __future__ import annotations

from ..checkpoint.reading import read_checkpoint
from .state import rng_state, set_rng_state


def state_dict(self) -> dict:
    """Checkpoint entries of the loop itself (the hooks add theirs)."""
    s = self.schedule
    return {
        "optimizer": self.optimizer.state_dict(),
        "scaler": self.scaler.state_dict(),
        "scheduler": {
            "base_lr": s.base_lr,
            "epochs": s.epochs,
            "warmup_epochs": s.warmup_epochs,
            "policy": s.policy,
        },
        "epoch": self.epoch,
        "step_in_epoch": self.step_in_epoch,
        "step": self.step,
        "rng": rng_state(),
        "comm": {"sync": self.sync_comm.state_dict(), "metrics": self.metric_comm.state_dict()},
    }


def resume(self) -> bool:
    """Restore from ``last.pth`` if present (a fresh start otherwise, as torchrun restarts)."""
    path = self.work_dir / "last.pth"
    if not path.is_file():
        return False
    ck = read_checkpoint(path)
    self.model.load_state_dict(ck["state_dict"])
    self.optimizer.load_state_dict(ck["optimizer"])
    self.scaler.load_state_dict(ck["scaler"])
    self.epoch, self.step_in_epoch, self.step = ck["epoch"], ck["step_in_epoch"], ck["step"]
    self.sync_comm.load_state_dict(ck["comm"]["sync"])
    self.metric_comm.load_state_dict(ck["comm"]["metrics"])
    for hook in self.hooks:
        hook.load_state_dict(ck)
    set_rng_state(ck["rng"])
    return True


def summary(self) -> dict:
    """The run's summary once it ended: the defaults, then each hook's entries, then the loop's
    counters and all-reduce totals (``signal`` only when the run was stopped early)."""
    out = dict(signal=0, val_top1=None, val_top5=None, best_top1=-1.0, best_epoch=None, wall_s=0.0)
    for hook in self.hooks:
        out.update(hook.summary())
    sync, metric = self.sync_comm, self.metric_comm
    return dict(
        out,
        epochs=self.epoch,
        steps=self.step,
        stopped=self.stopped,
        signal=out["signal"] if self.stopped else 0,
        syncs=sync.syncs,
        sync_allreduce_calls=sync.calls,
        sync_allreduce_bytes=sync.bytes,
        metric_allreduce_calls=metric.calls,
        work_dir=str(self.work_dir),
    )
