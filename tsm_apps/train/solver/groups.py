"""Optimizer policies: which parameters get which learning-rate multiplier and weight decay.

Every group carries ``lr_mult`` (the group's LR is ``base x lr_mult``, see
:func:`.schedule.set_lr`), its ``weight_decay`` and a ``name``. Parameters with
``requires_grad=False`` (fixed BN layers) are left out; empty groups are dropped.

* ``"tsm_apps"``: decay on conv/fc weights only (none on BN and biases, "Training Kinetics in 15
  minutes"); the fc at ``fc_lr_mult`` when fine-tuning from a checkpoint.
* ``"tsm_official"``: ``TSN.get_optim_policies`` of the official TSM code
  (mit-han-lab/temporal-shift-module ``ops/models.py`` 193-261): the first conv's weight at LR
  x5 for flow (x1 RGB) with decay, its bias at x10 for flow (x2 RGB) without; every other conv
  weight x1 with decay, every other bias x2 without; BN scale/shift x1 without decay; the fc
  weight x5 and bias x10 (decay / none) when the fc is new (``fc_lr5`` in ``main.py`` 63: not
  fine-tuned from a checkpoint of the same classes), else as other weights and biases.
"""

from __future__ import annotations

from torch import nn

from .batchnorm import BN_TYPES, bn_layers

OPTIM_POLICIES = ("tsm_apps", "tsm_official")
CONVS = (nn.Conv1d, nn.Conv2d, nn.Conv3d)


def param_groups(
    model: nn.Module, weight_decay: float, fc_lr_mult: float = 1.0, fc_name: str = "fc"
) -> list:
    """The ``tsm_apps`` policy: decayed weights, undecayed BN/bias, the fc at ``fc_lr_mult``."""
    bn_params = {id(p) for m in bn_layers(model) for p in m.parameters(recurse=False)}
    groups = {
        ("decay", 1.0): [],
        ("no_decay", 1.0): [],
        ("decay", fc_lr_mult): [],
        ("no_decay", fc_lr_mult): [],
    }
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        is_fc = name.split(".")[0] == fc_name
        decay = (
            "no_decay" if (id(p) in bn_params or name.endswith("bias") or p.dim() <= 1) else "decay"
        )
        groups[(decay, fc_lr_mult if is_fc else 1.0)].append(p)
    return [
        {
            "params": params,
            "weight_decay": weight_decay if decay == "decay" else 0.0,
            "lr_mult": mult,
            "name": f"{decay}_x{mult:g}",
        }
        for (decay, mult), params in groups.items()
        if params
    ]


def official_groups(
    model: nn.Module, weight_decay: float, flow: bool = False, fc_new: bool = True
) -> list:
    """The ``tsm_official`` policy (see the module docstring), in the official group order."""
    names = (
        "first_conv_weight",
        "first_conv_bias",
        "normal_weight",
        "normal_bias",
        "BN scale/shift",
        "lr5_weight",
        "lr10_bias",
    )
    lists: dict = {n: [] for n in names}
    first = True
    for m in model.modules():
        own = [p for p in m.parameters(recurse=False)]
        if isinstance(m, CONVS):
            kind = "first_conv" if first else "normal"
            first = False
        elif isinstance(m, nn.Linear):
            kind = "fc" if fc_new else "normal"
        elif isinstance(m, BN_TYPES):
            lists["BN scale/shift"] += [p for p in own if p.requires_grad]
            continue
        elif own and any(p.requires_grad for p in own):
            raise ValueError(
                f"tsm_official policy: no rule for trainable parameters of "
                f"{type(m).__name__}; expected Conv, Linear or BatchNorm layers"
            )
        else:
            continue
        weight, bias = (
            ("lr5_weight", "lr10_bias") if kind == "fc" else (f"{kind}_weight", f"{kind}_bias")
        )
        if m.weight.requires_grad:
            lists[weight].append(m.weight)
        if m.bias is not None and m.bias.requires_grad:
            lists[bias].append(m.bias)
    lr = {
        "first_conv_weight": 5 if flow else 1,
        "first_conv_bias": 10 if flow else 2,
        "normal_weight": 1,
        "normal_bias": 2,
        "BN scale/shift": 1,
        "lr5_weight": 5,
        "lr10_bias": 10,
    }
    decays = {"first_conv_weight", "normal_weight", "lr5_weight"}
    return [
        {
            "params": lists[n],
            "lr_mult": float(lr[n]),
            "name": n,
            "weight_decay": weight_decay if n in decays else 0.0,
        }
        for n in names
        if lists[n]
    ]


def optim_groups(
    model: nn.Module,
    policy: str,
    weight_decay: float,
    *,
    fc_lr_mult: float = 1.0,
    flow: bool = False,
    fc_new: bool = True,
) -> list:
    """Groups of ``policy`` (one of :data:`OPTIM_POLICIES`)."""
    if policy == "tsm_apps":
        return param_groups(model, weight_decay, fc_lr_mult)
    if policy == "tsm_official":
        return official_groups(model, weight_decay, flow, fc_new)
    raise ValueError(f"optim_policy must be one of {OPTIM_POLICIES}, got {policy!r}")
