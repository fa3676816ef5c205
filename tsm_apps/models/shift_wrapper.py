"""The shift wrapper: :class:`TemporalShift` shifts the input of the module it wraps.

Layout: ``(N*T, C, H, W)`` with the ``T`` frames of one clip contiguous (NCHW or channels-last),
or, in streaming mode, ``(N, C, H, W)``: one frame per stream. The wrapped module is ``.net``, as
in the official wrapper, so official checkpoint keys (``layer1.0.conv1.net.weight``) map by
prefix. Each call picks one form of the shift from :mod:`.shift`: in place for the duration of
the wrapped module's call when autograd is off (:func:`.shift.shifted_in_place`,
:func:`.shift.online_step_in_place`), into a static buffer (:func:`.shift.online_step_into`),
or out of place (:func:`.shift.temporal_shift`, :func:`.shift.online_shift_step`).
"""

from __future__ import annotations

from torch import Tensor, nn

from .shift import (
    DEFAULT_FOLD_DIV,
    online_shift_step,
    online_step_in_place,
    online_step_into,
    shifted_in_place,
    shifts_in_place,
    temporal_shift,
    writable_view,
)


def _own(y: Tensor, x: Tensor) -> Tensor:
    """``y``, copied if it shares memory with ``x`` (which is about to be restored)."""
    if y.untyped_storage().data_ptr() == x.untyped_storage().data_ptr():
        return y.clone()
    return y


class TemporalShift(nn.Module):
    """Shift the input of ``net`` (official wrapper layout: the wrapped module is ``.net``).

    ``num_segments`` may be changed at run time (multigrid). In streaming mode (see
    :func:`tsm_apps.models.online.streaming`) each call receives one frame per stream,
    ``(N, C, H, W)``, and the module keeps the previous frame's shifted channels in ``buffer``:
    a new tensor each step, or, with ``static`` set, one preallocated tensor written in place
    (:func:`online_step_into`). On CUDA the shift is one Triton kernel.
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
        self.streaming = False
        self.static = False
        self.buffer: Tensor | None = None

    def forward(self, x: Tensor) -> Tensor:
        if self.streaming and self.static:
            return self.net(online_step_into(x, self.buffer, self.fold_div))
        if self.streaming and writable_view(x):
            with online_step_in_place(x, self.buffer, self.fold_div) as new:
                y = _own(self.net(x), x)
            self.buffer = new
            return y
        if self.streaming:
            x, self.buffer = online_shift_step(x, self.buffer, self.fold_div)
        elif shifts_in_place(x):
            with shifted_in_place(x, self.num_segments, self.fold_div, self.online):
                return _own(self.net(x), x)
        else:
            x = temporal_shift(x, self.num_segments, self.fold_div, self.online)
        return self.net(x)

    def extra_repr(self) -> str:
        mode = "online" if self.online else "offline"
        return f"num_segments={self.num_segments}, fold_div={self.fold_div}, {mode}"
