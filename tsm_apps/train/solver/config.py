"""The optimisation section of a training configuration (``TrainConfig.optim``): the epochs,
the global batch and its micro-batches, the learning rate and its schedule, the optimiser and
its parameter groups, the BN mode, precision (the step's: :mod:`.precision`) and compilation.
Its fields are ``tsm train`` flags (:mod:`tsm_apps.options`), validated like the other sections
(:func:`.sections.check`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...options import numbers, option
from ..sections import check, is_number
from .batchnorm import BN_MODES
from .groups import OPTIM_POLICIES
from .schedule import LR_POLICIES, LR_SCALINGS, WARMUP_RULES

OPTIMIZERS = ("sgd", "adam")
COMPILERS = ("none", "inductor", "aot_eager")  # torch.compile backends offered
COMPILE_MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
AMP_DTYPES = ("fp16", "bf16")  # autocast dtypes of amp (solver.precision: their torch dtypes)


def _rising(values: Any) -> bool:
    return (
        isinstance(values, list)
        and all(is_number(v) and v > 0 for v in values)
        and all(b > a for a, b in zip(values, values[1:]))
    )


@dataclass
class OptimConfig:
    """The optimisation: schedule, learning rate, optimiser, BN mode, precision."""

    epochs: int = field(default=50, **option("training epochs"))
    batch_size: int = field(
        default=64,
        **option("the global batch: all processes together, each takes batch_size / W clips"),
    )
    accum_steps: int = field(
        default=1,
        **option(
            "each process splits its share into this many micro-batches (gradients accumulated)"
        ),
    )
    lr_per_8: float = field(default=0.00125, **option("learning rate per 8 clips"))
    lr_scaling: str = field(
        default="global",
        **option(
            "global: lr_per_8 per 8 clips of the global batch (linear scaling); process: of one "
            "process's batch, the same LR on any number of learners (AAVG)",
            choices=LR_SCALINGS,
        ),
    )
    lr_policy: str = field(
        default="cosine",
        **option(
            "after the warm-up: cosine, step (x0.1 at each of lr_steps) or constant",
            choices=LR_POLICIES,
        ),
    )
    lr_steps: list = field(
        default_factory=list,
        **option(
            "epochs of the x0.1 steps (lr_policy step), comma-separated",
            type=numbers,
            metavar="E,E,...",
        ),
    )
    warmup_epochs: float = field(default=0.0, **option("linear warm-up epochs"))
    warmup_start: float = field(
        default=0.1, **option("warmup_rule fraction: the warm-up starts at this fraction of the LR")
    )
    warmup_rule: str = field(
        default="fraction",
        **option(
            "fraction: from warmup_start x the LR; worker: from one worker's LR (Goyal et al.)",
            choices=WARMUP_RULES,
        ),
    )
    min_lr_ratio: float = field(default=0.0, **option("cosine: the last LR, a fraction of it"))
    optimizer: str = field(default="sgd", **option("sgd or adam", choices=("sgd", "adam")))
    momentum: float = field(default=0.9, **option("SGD momentum"))
    nesterov: bool = field(default=False, **option("SGD with Nesterov momentum"))
    weight_decay: float = field(default=1e-4, **option("weight decay (on conv and fc weights)"))
    optim_policy: str = field(
        default="tsm_apps",
        **option(
            "parameter groups: tsm_apps (no decay on BN and biases) or tsm_official (the official "
            "get_optim_policies)",
            choices=OPTIM_POLICIES,
        ),
    )
    fc_lr_mult: float = field(
        default=5.0,
        **option("tsm_apps policy: the fc's LR multiplier when fine-tuning from --pretrained"),
    )
    bn: str = field(
        default="train",
        **option(
            "BN layers: train, partial (all but the first fixed: TSN's partial BN) or frozen",
            choices=BN_MODES,
        ),
    )
    precise_bn_batches: int = field(
        default=0,
        **option(
            "recompute the BN statistics over this many training batches after each epoch "
            "(precise BN; 0: off)"
        ),
    )
    clip_grad: float = field(default=20.0, **option("max gradient norm (0: no clipping)"))
    amp: bool = field(default=True, **option("mixed precision (CUDA only)"))
    amp_dtype: str = field(
        default="fp16",
        **option(
            "amp's autocast dtype: fp16 (the loss scaled by a GradScaler) or bf16 (fp32's "
            "exponent range: no loss scaling)",
            choices=AMP_DTYPES,
        ),
    )
    channels_last: bool = field(default=True, **option("channels-last memory (CUDA only)"))
    compile: str = field(
        default="none",
        **option(
            "torch.compile the network with this backend: inductor (the shift is traced as tensor "
            "ops the compiler fuses into fewer kernels; compiling takes a minute or so), "
            "aot_eager (traced, not compiled: a check) or none",
            choices=COMPILERS,
        ),
    )
    compile_mode: str = field(
        default="default",
        **option(
            "torch.compile's mode (inductor only): default (fused kernels, each still launched "
            "from the host: no CUDA graphs), reduce-overhead (the compiled kernels replayed from "
            "CUDA graphs, the network's kernels without a launch each: more memory, one graph per "
            "input shape), "
            "max-autotune (kernels autotuned, which compiles longer, and CUDA graphs as "
            "reduce-overhead), max-autotune-no-cudagraphs (autotuned, no graphs)",
            choices=COMPILE_MODES,
        ),
    )

    cuda_graphs: bool = field(
        default=False,
        **option(
            "replay the network's forward and backward from CUDA graphs, captured once per input "
            "shape (torch.cuda.make_graphed_callables): the network's kernels without a launch "
            "each, the loss and the update eager; one CUDA process, fixed shapes: not with "
            "multigrid, DDP, K-step averaging or compile"
        ),
    )

    def __post_init__(self) -> None:
        check(
            [
                (
                    self.compile in COMPILERS,
                    f"compile must be one of {COMPILERS}, got {self.compile!r}",
                ),
                (
                    self.compile_mode in COMPILE_MODES,
                    f"compile_mode must be one of {COMPILE_MODES}, got {self.compile_mode!r}",
                ),
                (
                    self.compile_mode == "default" or self.compile == "inductor",
                    f"compile_mode {self.compile_mode!r} needs compile 'inductor', got "
                    f"{self.compile!r}",
                ),
                (
                    self.amp_dtype in AMP_DTYPES,
                    f"amp_dtype must be one of {AMP_DTYPES}, got {self.amp_dtype!r}",
                ),
                (
                    self.optimizer in OPTIMIZERS,
                    f"optimizer must be one of {OPTIMIZERS}, got {self.optimizer!r}",
                ),
                (self.bn in BN_MODES, f"bn must be one of {BN_MODES}, got {self.bn!r}"),
                (self.epochs >= 1, f"epochs must be >= 1, got {self.epochs}"),
                (self.batch_size >= 1, f"batch_size must be >= 1, got {self.batch_size}"),
                (self.accum_steps >= 1, f"accum_steps must be >= 1, got {self.accum_steps}"),
                (self.lr_per_8 > 0, f"lr_per_8 must be > 0, got {self.lr_per_8}"),
                (
                    self.lr_policy in LR_POLICIES,
                    f"lr_policy must be one of {LR_POLICIES}, got {self.lr_policy!r}",
                ),
                (
                    self.lr_scaling in LR_SCALINGS,
                    f"lr_scaling must be one of {LR_SCALINGS}, got {self.lr_scaling!r}",
                ),
                (
                    self.warmup_rule in WARMUP_RULES,
                    f"warmup_rule must be one of {WARMUP_RULES}, got {self.warmup_rule!r}",
                ),
                (
                    self.precise_bn_batches >= 0,
                    f"precise_bn_batches must be >= 0, got {self.precise_bn_batches}",
                ),
                (
                    self.optim_policy in OPTIM_POLICIES,
                    f"optim_policy must be one of {OPTIM_POLICIES}, got {self.optim_policy!r}",
                ),
                (
                    _rising(self.lr_steps),
                    f"lr_steps must be rising epochs > 0, got {self.lr_steps!r}",
                ),
            ],
            "optim",
        )
