"""Where the shift goes in a 2-D trunk, as the official ``make_temporal_shift`` places it.

ResNets (``stages``: the four stages' blocks): the shift wraps each residual block's first
convolution (``place="blockres"``: the shortcut carries the unshifted input) or the whole block
(``place="block"``), in every block, and in every other block from ResNet-101 on (23 or more
blocks in stage 3). MobileNetV2 (``features``): the first convolution of each inverted residual
block that has a shortcut.
"""

from __future__ import annotations

from typing import Sequence

from torch import nn

from .layer import TemporalShift

PLACES = ("blockres", "block")


def shift_resnet_blocks(
    stages: Sequence[nn.Sequential],
    stage_segments: Sequence[int],
    fold_div: int,
    online: bool,
    place: str = "blockres",
) -> None:
    """Wrap the blocks of ``stages`` (in place); stage ``i`` clips have ``stage_segments[i]``
    frames (fewer after a temporal pool)."""
    if place not in PLACES:
        raise ValueError(f"place must be one of {PLACES}, got {place!r}")
    every = 2 if len(stages[2]) >= 23 else 1
    for stage, t in zip(stages, stage_segments):
        for i, block in enumerate(stage):
            if i % every:
                continue
            if place == "blockres":
                block.conv1 = TemporalShift(block.conv1, t, fold_div, online)
            else:
                stage[i] = TemporalShift(block, t, fold_div, online)


def shift_mobilenet_blocks(
    features: nn.Sequential, num_segments: int, fold_div: int, online: bool
) -> None:
    """Wrap the first convolution of each inverted residual block with a shortcut (in place)."""
    for m in features:
        if getattr(m, "use_res_connect", False) and len(m.conv) == 4:
            m.conv[0] = TemporalShift(m.conv[0], num_segments, fold_div, online)
