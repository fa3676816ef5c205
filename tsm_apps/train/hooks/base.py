"""``HookBase``: what the training loop calls at fixed points (detectron2's hook protocol)."""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..trainer import Trainer


class HookBase:
    """Override any of the events; ``self.trainer`` is set by ``Trainer.register_hooks``.

    The trainer calls every event on its hooks in registration order:

    * ``before_train``: once, after a resume, inside ``trainer.scope`` (an ``ExitStack``:
      temporary state entered there, such as a signal handler or an open log, is released
      when the run ends, also on an exception);
    * ``before_epoch``: the epoch's batches are planned (``trainer.steps_in_epoch``); inside
      ``trainer.epoch_scope``, which closes when the epoch's steps end;
    * ``before_step``: ``trainer.batch`` and ``trainer.lr`` are set, ``train_step`` comes next;
    * ``after_step``: ``trainer.loss`` is the step's loss and the counters have advanced; a hook
      may set ``trainer.stopped`` to end the run after this step;
    * ``after_epoch``: after the epoch's last step and the consolidation of the model across
      processes; ``trainer.epoch`` counts the finished epochs, ``trainer.epoch_totals`` holds
      the finished epoch's ``[loss sum, clips, seconds]``;
    * ``after_train``: after ``trainer.scope`` has closed, when the run ended without an
      exception (finished, or stopped early).

    ``state_dict()`` entries go into the top level of every checkpoint; ``load_state_dict``
    receives the whole checkpoint on resume.
    """

    trainer: "Trainer"

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

    def load_state_dict(self, checkpoint: dict) -> None:
        pass
