"""The temporal shift, one concept in one sub-package (the official code's
``ops/temporal_shift.py``): the zero-FLOP exchange of channels between the frames of a clip.

Layout everywhere: ``(N*T, C, H, W)`` with the ``T`` frames of one clip contiguous, NCHW or
channels-last; while a stream steps online, ``(N, C, H, W)``: one frame of each of ``N`` streams.

* :mod:`.op`: the shift itself (offline and online, out of place, in place, into a buffer) and
  the choice of its path: slice copies on CPU, the Triton kernel on CUDA, ``torch.cat`` while
  tracing or exporting;
* :mod:`.slice_copy`: the slice-copy and ``torch.cat`` forms (the CPU and export paths);
* :mod:`.kernel`: the Triton kernels (CUDA), forward and backward, in place and online, and
  the residual epilogue fused with the shift (``relu(a + b)`` and its shift in one launch);
* :mod:`.layer`: :class:`TemporalShift`, the layer that shifts the input of the module it wraps
  (official checkpoint keys ``...conv1.net.weight``); where the layers go in a backbone is the
  backbone's choice (:func:`tsm_apps.models.backbone.build_backbone`);
* :mod:`.residual`: :class:`ResidualShiftStage`, a ResNet stage whose blocks' epilogues also
  write the next shifted block's input under ``cuda_shift_path("fused")`` on CUDA
  (:func:`residual_relu_shift`; a plain ``nn.Sequential`` elsewhere), and
  :func:`fuse_residual_shifts`, which makes a model's stages such stages (names unchanged).
  Opt-in: no builder applies it. Its speed on a GPU is not measured yet (``tsm bench
  --device cuda`` prints it: docs/results.md §6.5);
* :mod:`.state`: the online buffers a stream carries from frame to frame
  (:class:`ShiftState`) and :func:`stepping`, which binds them to the layers for one step;
* :mod:`.memory_format`: which memory format an activation is stored in.
"""

from .layer import TemporalShift
from .op import (
    CUDA_PATHS,
    DEFAULT_FOLD_DIV,
    cuda_shift_path,
    online_shift_step,
    online_step_in_place,
    online_step_into,
    residual_relu_shift,
    shifted_in_place,
    shifts_in_place,
    temporal_shift,
    writable_view,
)
from .residual import ResidualShiftStage, fuse_residual_shifts
from .state import ShiftState, bound_slot, stepping

__all__ = [
    "CUDA_PATHS",
    "DEFAULT_FOLD_DIV",
    "ResidualShiftStage",
    "ShiftState",
    "TemporalShift",
    "bound_slot",
    "cuda_shift_path",
    "fuse_residual_shifts",
    "online_shift_step",
    "online_step_in_place",
    "online_step_into",
    "residual_relu_shift",
    "shifted_in_place",
    "shifts_in_place",
    "stepping",
    "temporal_shift",
    "writable_view",
]
