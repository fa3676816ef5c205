"""The synthetic VID set's ``corruptions.json`` sidecar: which frames are corrupted and how.

Format (written by :mod:`tsm_apps.synth.vid`)::

    {"train": {"<snippet>": {"<frame index from 0>": "<kind>", ...}, ...}, "val": {...},
     "test": {...}}

Pure Python (no mmdet); read by the dataset (``corruption`` of each entry) and the metric (the
corrupted-frame split). Frames are keyed as the dataset's ``img_id``: ``"<split>/<snippet>/%06d"``.
"""

from __future__ import annotations

import os.path as osp
from typing import Optional

from tsm_apps.io import read_json

SIDECAR = "corruptions.json"


def load_corruptions(root: Optional[str]) -> Optional[dict[str, str]]:
    """``{img_id: kind}`` from ``<root>/corruptions.json``; ``None`` when there is no sidecar.
    A malformed file raises ``ValueError`` naming it."""
    path = osp.join(root or "", SIDECAR)
    if not osp.isfile(path):
        return None
    data = read_json(path)  # a broken file: ValueError naming it and the line
    out: dict[str, str] = {}
    try:
        for split, snippets in data.items():
            for snippet, frames in snippets.items():
                for frame, kind in frames.items():
                    out[f"{split}/{snippet}/{int(frame):06d}"] = str(kind)
    except (AttributeError, TypeError, ValueError):
        raise ValueError(
            f"{path}: expected {{split: {{snippet: {{frame index: kind}}}}}}"
        ) from None
    return out


def frame_corruption(table: Optional[dict[str, str]], img_id: str) -> Optional[str]:
    """The corruption of frame ``img_id`` (``None``: clean, or no sidecar)."""
    return None if table is None else table.get(img_id)
