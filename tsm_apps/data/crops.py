"""Where the test views of a frame lie: the crop geometry of each reference pipeline.

Every function returns crop positions ``(y, x, flip)`` (top-left corner in the resized frame,
whether the view is mirrored) for frames of ``H x W`` and crops of ``h x w``. Two styles:

``"official"`` -- the official TSM repository (``ops/transforms.py``, ``test_models.py``) and
this suite: 1 crop = torchvision ``CenterCrop`` (offsets ``int(round((H - h) / 2))``, Python
rounding, so 115.5 -> 116); 3 = ``GroupFullResSample`` (left, right, centre at
``x = 0, 4*ws, 2*ws`` and ``y = 2*hs`` with ``ws = (W - w) // 4``, ``hs = (H - h) // 4``);
5 / 10 = ``GroupOverSample`` (four corners and the centre on the same quarter grid; 10 adds
each one mirrored, right after it).

``"mmaction2"`` -- mmaction2 1.x ``processing.py``: 1 = ``CenterCrop`` (``(W - w) // 2``,
``(H - h) // 2``); 3 = ``ThreeCrop`` (along the longer side, ``0, 2*s, s`` with
``s = (W - w) // 2`` or ``(H - h) // 2``; the crop must span the other side); 10 = ``TenCrop``
(the quarter-grid corners and centre, each followed by its mirror).
"""

from __future__ import annotations

from typing import List, Tuple

CROP_STYLES = ("official", "mmaction2")
VIEW_CROPS = {"official": (1, 3, 5, 10), "mmaction2": (1, 3, 10)}
Offset = Tuple[int, int, bool]

__all__ = ["CROP_STYLES", "VIEW_CROPS", "centre_offset", "view_offsets", "fixed_offsets"]


def centre_offset(H: int, W: int, h: int, w: int, style: str = "official") -> Tuple[int, int]:
    """``(y, x)`` of the centre crop: rounded (official/torchvision) or floored (mmaction2)."""
    if style == "official":
        return int(round((H - h) / 2.0)), int(round((W - w) / 2.0))
    if style == "mmaction2":
        return (H - h) // 2, (W - w) // 2
    raise ValueError(f"crop style must be one of {CROP_STYLES}, got {style!r}")


def fixed_offsets(H: int, W: int, h: int, w: int, more: bool = True) -> List[Tuple[int, int]]:
    """The official fixed crop positions ``(y, x)`` of ``GroupMultiScaleCrop.fill_fix_offset``:
    4 corners and the centre, plus (``more``) 4 edge centres and 4 quarter points -- 13 in all.
    Steps are ``(H - h) // 4``, ``(W - w) // 4``."""
    hs, ws = (H - h) // 4, (W - w) // 4
    grid = [(0, 0), (0, 4), (4, 0), (4, 4), (2, 2)]
    if more:
        grid += [(2, 0), (2, 4), (4, 2), (0, 2), (1, 1), (1, 3), (3, 1), (3, 3)]
    return [(gy * hs, gx * ws) for gy, gx in grid]


def _with_mirrors(offsets: List[Tuple[int, int]]) -> List[Offset]:
    return [(y, x, flip) for y, x in offsets for flip in (False, True)]


def _official(crops: int, H: int, W: int, h: int, w: int) -> List[Offset]:
    if crops == 1:
        return [(*centre_offset(H, W, h, w, "official"), False)]
    hs, ws = (H - h) // 4, (W - w) // 4
    if crops == 3:
        return [(2 * hs, 0, False), (2 * hs, 4 * ws, False), (2 * hs, 2 * ws, False)]
    five = fixed_offsets(H, W, h, w, more=False)
    return [(y, x, False) for y, x in five] if crops == 5 else _with_mirrors(five)


def _mmaction2(crops: int, H: int, W: int, h: int, w: int) -> List[Offset]:
    if crops == 1:
        return [(*centre_offset(H, W, h, w, "mmaction2"), False)]
    if crops == 3:
        if h == H:
            s = (W - w) // 2
            return [(0, 0, False), (0, 2 * s, False), (0, s, False)]
        if w == W:
            s = (H - h) // 2
            return [(0, 0, False), (2 * s, 0, False), (s, 0, False)]
        raise ValueError(
            f"mmaction2 ThreeCrop needs a crop spanning one side: crop {h}x{w} of {H}x{W} frames"
        )
    return _with_mirrors(fixed_offsets(H, W, h, w, more=False))


def view_offsets(style: str, crops: int, H: int, W: int, h: int, w: int) -> List[Offset]:
    """``crops`` views ``(y, x, flip)`` of a ``h x w`` crop in ``H x W`` frames (module doc)."""
    if style not in CROP_STYLES:
        raise ValueError(f"crop style must be one of {CROP_STYLES}, got {style!r}")
    if crops not in VIEW_CROPS[style]:
        raise ValueError(
            f"{style} test views: crops must be one of {VIEW_CROPS[style]}, got {crops}"
        )
    if h > H or w > W:
        raise ValueError(f"crop {h}x{w} does not fit frames of {H}x{W}")
    return (_official if style == "official" else _mmaction2)(crops, H, W, h, w)
