"""The solver: everything between the training options and the optimizer's step, in one place.

* :mod:`.config`: :class:`OptimConfig`, the optimisation section of a ``TrainConfig`` (epochs,
  batch, LR and its schedule, optimizer, parameter-group policy, BN mode, precision);
* :mod:`.schedule`: the learning rate over the run (linear scaling with the batch, warm-up,
  cosine / step / constant; :class:`LRSchedule`), and :func:`set_lr`;
* :mod:`.groups`: which parameters get which LR multiplier and weight decay (the suite's policy,
  the official TSM ``get_optim_policies``);
* :mod:`.batchnorm`: which BatchNorm layers train (partial BN, frozen);
* :mod:`.optimizer`: SGD or Adam over the groups (:func:`build_optimizer`);
* :mod:`.precision`: the step's autocast dtype and loss scaling (:func:`step_precision`).
"""

from .batchnorm import BN_MODES, freeze_bn_parameters, set_train_mode
from .config import OptimConfig
from .groups import OPTIM_POLICIES, optim_groups
from .optimizer import build_optimizer
from .precision import Precision, step_precision
from .schedule import LRSchedule, base_lr, run_schedule, set_lr, step_lrs

__all__ = [
    "BN_MODES",
    "LRSchedule",
    "OPTIM_POLICIES",
    "OptimConfig",
    "Precision",
    "base_lr",
    "build_optimizer",
    "freeze_bn_parameters",
    "optim_groups",
    "run_schedule",
    "set_lr",
    "set_train_mode",
    "step_lrs",
    "step_precision",
]
