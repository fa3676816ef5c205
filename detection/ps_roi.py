"""Position-sensitive RoI pooling followed by the R-FCN average vote (pure tensor functions).

Score maps ``(N, k*k*D, H, W)`` hold, for each of ``D`` outputs (classes + background, or box
deltas), ``k*k`` maps, one per relative position of a ``k x k`` grid over a RoI. Channel order
(the R-FCN / torchvision order): the map of output ``d`` at grid cell ``(i, j)`` (row ``i``,
column ``j``) is channel ``(d * k + i) * k + j``. PS RoI pooling reads cell ``(i, j)`` of each
RoI from its own map only, giving ``(R, D, k, k)``; the vote averages the ``k*k`` cells to
``(R, D)``.
"""

from __future__ import annotations

from torch import Tensor, nn
from torchvision.ops import ps_roi_align, ps_roi_pool

POOL_MODES = ("align", "pool")


def check_rois(rois: Tensor, num_images: int) -> None:
    """``rois`` must be ``(R, 5)``: ``(batch_index, x1, y1, x2, y2)`` in input-image pixels."""
    if not isinstance(rois, Tensor):
        raise TypeError(f"rois must be a Tensor (R, 5), got {type(rois).__name__}")
    if rois.dim() != 2 or rois.shape[1] != 5:
        raise ValueError(
            f"rois must be (R, 5) = (batch_index, x1, y1, x2, y2), got shape {tuple(rois.shape)}"
        )
    if rois.numel() and (rois[:, 0].min() < 0 or rois[:, 0].max() >= num_images):
        raise ValueError(
            f"rois batch indices span [{int(rois[:, 0].min())}, "
            f"{int(rois[:, 0].max())}] but the score maps hold {num_images} images"
        )


def ps_roi_vote(
    score_maps: Tensor,
    rois: Tensor,
    k: int,
    spatial_scale: float,
    mode: str = "align",
    sampling_ratio: int = 2,
) -> Tensor:
    """PS RoI pooling of ``score_maps`` then the average over the ``k x k`` cells.

    Args:
        score_maps: ``(N, k*k*D, H, W)`` in the channel order of the module docstring.
        rois: ``(R, 5)`` ``(batch_index, x1, y1, x2, y2)`` in input pixels.
        k: grid size.
        spatial_scale: feature-map pixels per input pixel (``1/16`` at stride 16).
        mode: ``'align'`` (bilinear, ``torchvision.ops.ps_roi_align``) or ``'pool'``
            (quantised bins, mean within a bin, ``ps_roi_pool``, as the original R-FCN).
        sampling_ratio: bilinear samples per cell side for ``'align'`` (``<= 0``: adaptive).

    Returns:
        ``(R, D)`` voted scores.
    """
    if score_maps.dim() != 4:
        raise ValueError(f"score maps must be (N, k*k*D, H, W), got {tuple(score_maps.shape)}")
    if k < 1 or score_maps.shape[1] % (k * k):
        raise ValueError(
            f"score maps have {score_maps.shape[1]} channels, not a multiple of "
            f"k*k={k * k} (shape {tuple(score_maps.shape)})"
        )
    check_rois(rois, score_maps.shape[0])
    rois = rois.to(score_maps.dtype)
    if mode == "align":
        cells = ps_roi_align(score_maps, rois, k, spatial_scale, sampling_ratio)
    elif mode == "pool":
        cells = ps_roi_pool(score_maps, rois, k, spatial_scale)
    else:
        raise ValueError(f"pool mode must be one of {POOL_MODES}, got {mode!r}")
    return cells.mean(dim=(2, 3))


class PSRoIVote(nn.Module):
    """Module form of :func:`ps_roi_vote` (no parameters): ``(maps, rois) -> (R, D)``."""

    def __init__(
        self,
        k: int = 7,
        spatial_scale: float = 1 / 16,
        mode: str = "align",
        sampling_ratio: int = 2,
    ) -> None:
        super().__init__()
        if mode not in POOL_MODES:
            raise ValueError(f"pool mode must be one of {POOL_MODES}, got {mode!r}")
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        self.k, self.spatial_scale = k, spatial_scale
        self.mode, self.sampling_ratio = mode, sampling_ratio

    def forward(self, score_maps: Tensor, rois: Tensor) -> Tensor:
        return ps_roi_vote(
            score_maps, rois, self.k, self.spatial_scale, self.mode, self.sampling_ratio
        )

    def extra_repr(self) -> str:
        return (
            f"k={self.k}, spatial_scale={self.spatial_scale}, mode={self.mode!r}, "
            f"sampling_ratio={self.sampling_ratio}"
        )
