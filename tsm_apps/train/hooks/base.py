"""What the training loop calls at fixed points (detectron2's hook protocol), and :class:`Loop`,
the small interface through which a hook sees the loop.

Hooks never import the trainer: they receive a :class:`Loop` (``hook.loop``, set by
``register_hooks``) and keep their own state (best validation, clock, adaptive batch, ...) in
their own objects; a hook that needs another's results takes that hook in its constructor.
"""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional, Protocol

import torch
from torch import Tensor, nn

from ...distributed import CommCounter, DistEnv

if TYPE_CHECKING:
    from ..config import TrainConfig


class Loop(Protocol):
    """The training loop as hooks see it (:class:`~tsm_apps.train.trainer.Trainer`).

    Run: ``cfg``, ``env``, ``device``, ``model`` (the recognizer, never the DDP wrapper),
    ``work_dir``, ``meta`` (entries for checkpoint meta), ``plan`` (the batch plan; its
    ``batch`` is the clips per process at the base shape), ``epochs`` (epochs of the run).
    Counters: ``epoch`` (finished epochs), ``step_in_epoch``, ``step``, ``steps_in_epoch``.
    The current step: ``batch`` (``(x (N, T, C, S, S), y (N,))``), ``loss``, ``lr``.
    ``stopped``: a hook sets it to end the run after this step. ``scope`` / ``epoch_scope``:
    ``ExitStack`` of the run / the epoch. ``sync_comm`` counts the model's synchronisations
    (DDP buckets, averaging rounds, BN merges); ``metric_comm`` the all-reduces of metrics.
    ``hooks``: the registered hooks, in order.
    """

    cfg: "TrainConfig"
    env: DistEnv
    device: torch.device
    model: nn.Module
    work_dir: Path
    meta: dict
    plan: Any
    epochs: int
    epoch: int
    step_in_epoch: int
    step: int
    steps_in_epoch: int
    batch: Optional[tuple]
    loss: Optional[Tensor]
    lr: float
    stopped: bool
    scope: ExitStack
    epoch_scope: ExitStack
    sync_comm: CommCounter
    metric_comm: CommCounter
    hooks: list

    @property
    def amp(self) -> bool:
        """Mixed precision is on (CUDA only)."""

    def autocast(self) -> torch.autocast:
        """Autocast in the run's precision (``--amp``, ``--amp-dtype``; off: disabled)."""

    @property
    def synced(self) -> bool:
        """The step just taken left every process with the same model (DDP: every step; K-step
        averaging: after a round; one process: always)."""

    def consolidate(self) -> None:
        """Give every process the same model state (before an evaluation or a checkpoint)."""

    def state_dict(self) -> dict:
        """The checkpoint entries beside the model: optimizer, scaler, counters, RNG, and each
        hook's state under ``"hooks"``."""


class HookBase:
    """Override any of the events; ``self.loop`` is set by ``Trainer.register_hooks``.

    The loop calls every event on its hooks in registration order:

    * ``before_train``: once, after a resume, inside ``loop.scope`` (an ``ExitStack``:
      temporary state entered there, such as a signal handler or an open log, is released
      when the run ends, also on an exception);
    * ``before_epoch``: the epoch's batches are planned (``loop.steps_in_epoch``); inside
      ``loop.epoch_scope``, which closes when the epoch's steps end;
    * ``before_step``: ``loop.batch`` and ``loop.lr`` are set, the training step comes next;
    * ``after_step``: ``loop.loss`` is the step's loss and the counters have advanced; a hook
      may set ``loop.stopped`` to end the run after this step;
    * ``after_epoch``: after the epoch's last step and the consolidation of the model across
      processes; ``loop.epoch`` counts the finished epochs;
    * ``after_train``: after ``loop.scope`` has closed, when the run ended without an
      exception (finished, or stopped early).

    ``state_dict()`` is the hook's own state: a checkpoint keeps it under
    ``checkpoint["hooks"][hook.state_key]`` (detectron2's ``train_loop.py`` keys hooks by class
    name the same way), so two hooks never overwrite each other's entries; a ``"meta"`` entry is
    also copied into the checkpoint's meta, where readers of the checkpoint find it. On resume
    ``load_state_dict`` receives what ``state_dict`` returned. ``summary()`` entries go into the
    run's summary.
    """

    loop: Loop

    @property
    def state_key(self) -> str:
        """The hook's entry under a checkpoint's ``"hooks"``: its class's qualified name (one
        hook of a class per loop)."""
        return type(self).__qualname__

    def before_train(self) -> None:
        pass

    def after_train(self) -> None:
        pass

    def before_epoch(self) -> None:
        pass

    def after_epoch(self) -> None:
        pass

    def before_step(self) -> None:
        pass

    def after_step(self) -> None:
        pass

    def state_dict(self) -> dict:
        return {}

    def load_state_dict(self, state: dict) -> None:
        pass

    def summary(self) -> dict:
        return {}
