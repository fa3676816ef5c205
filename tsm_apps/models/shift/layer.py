"""The shift wrapper: :class:`TemporalShift` shifts the input of the module it wraps.

Layout: ``(N*T, C, H, W)`` with the ``T`` frames of one clip contiguous (NCHW or channels-last),
or, while a :func:`.state.stepping` block binds a :class:`.state.ShiftState` to the
module, ``(N, C, H, W)``: one frame per stream, the previous frame's folds read from and written
to that state (the module itself holds none). The wrapped module is ``.net``, as
in the official wrapper, so official checkpoint keys (``layer1.0.conv1.net.weight``) map by
prefix. Each call picks one form of the shift from :mod:`.op`: in place for the duration of
the wrapped module's call when autograd is off (:func:`.op.shifted_in_place`,
:func:`.op.online_step_in_place`), into a static buffer (:func:`.op.online_step_into`),
or out of place (:func:`.op.temporal_shift`, :func:`.op.online_shift_step`).
"""

from __future__ import annotations

from torch import Tensor, nn

from .op import (
    DEFAULT_FOLD_DIV,
    online_shift_step,
    online_step_in_place,
    online_step_into,
    shifted_in_place,
    shifts_in_place,
    temporal_shift,
    writable_view,
)
from .state import ShiftState, bound_slot


def _own(y: Tensor, x: Tensor) -> Tensor:
    """``y``, copied if it shares memory with ``x`` (which is about to be restored)."""
    if y.untyped_storage().data_ptr() == x.untyped_storage().data_ptr():
        return y.clone()
    return y


class TemporalShift(nn.Module):
    """Shift the input of ``net`` (official wrapper layout: the wrapped module is ``.net``).

    ``num_segments`` may be changed at run time (multigrid). Inside a
    :func:`~tsm_apps.models.shift.state.stepping` block that binds this module, each call
    receives one frame per stream, ``(N, C, H, W)``, and the previous frame's shifted channels
    come from the bound :class:`~tsm_apps.models.shift.state.ShiftState`: replaced by a new
    tensor each step, or, for a static state, written in place (:func:`online_step_into`). On
    CUDA the shift is one Triton kernel.
    """

    def __init__(
        self,
        net: nn.Module,
        num_segments: int = 8,
        fold_div: int = DEFAULT_FOLD_DIV,
        online: bool = False,
    ) -> None:
        super().__init__()
        self.net = net
        self.num_segments = num_segments
        self.fold_div = fold_div
        self.online = online

    def forward(self, x: Tensor) -> Tensor:
        slot = bound_slot(self)
        if slot is not None:
            return self._step(x, *slot)
        if shifts_in_place(x):
            with shifted_in_place(x, self.num_segments, self.fold_div, self.online):
                return _own(self.net(x), x)
        return self.net(temporal_shift(x, self.num_segments, self.fold_div, self.online))

    def _step(self, x: Tensor, state: ShiftState, i: int) -> Tensor:
        """One frame per stream ``(N, C, H, W)``; ``state.buffers[i]`` the previous frame's folds."""
        if state.static:
            return self.net(online_step_into(x, state.buffers[i], self.fold_div))
        if writable_view(x):
            with online_step_in_place(x, state.buffers[i], self.fold_div) as new:
                y = _own(self.net(x), x)
            state.buffers[i] = new
            return y
        x, state.buffers[i] = online_shift_step(x, state.buffers[i], self.fold_div)
        return self.net(x)

    def extra_repr(self) -> str:
        mode = "online" if self.online else "offline"
        return f"num_segments={self.num_segments}, fold_div={self.fold_div}, {mode}"
