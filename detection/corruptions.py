"""The synthetic VID set's ``corruptions.json`` sidecar: which frames are corrupted and how.

Pure Python (no mmdet); read by the dataset (``corruption`` of each entry) and the metric
(the corrupted-frame split). Frames are keyed as the dataset's ``img_id``:
``"<split>/<snippet>/%06d"``.
"""
from __future__ import annotations

import json
import os.path as osp
from typing import Optional

SIDECAR = "corruptions.json"


def load_corruptions(root: Optional[str]) -> Optional[dict[str, str]]:
    """``{img_id: kind}`` from ``<root>/corruptions.json``, ``None`` when there is no sidecar.
    A frame with several corruptions gets them joined by ``+`` in sorted order."""
    path = osp.join(root or "", SIDECAR)
    if not osp.isfile(path):
        return None
    try:
        data = json.loads(open(path, encoding="utf-8").read())
    except (OSError, json.JSONDecodeError) as e:
        raise ValueError(f"{path}: unreadable corruption sidecar ({e})") from None
    frames = data.get("frames", data) if isinstance(data, dict) else data
    out: dict[str, str] = {}
    items = frames.items() if isinstance(frames, dict) else \
        ((_record_key(r, path), r.get("kind", r.get("kinds"))) for r in frames)
    for key, kind in items:
        kinds = [kind] if isinstance(kind, str) else list(kind or [])
        if kinds:
            out[str(key)] = "+".join(sorted(str(k) for k in kinds))
    return out


def _record_key(rec: object, path: str) -> str:
    if not isinstance(rec, dict) or not {"split", "snippet", "frame"} <= set(rec):
        raise ValueError(f"{path}: expected records with split, snippet, frame, kind; got {rec!r}")
    return f"{rec['split']}/{rec['snippet']}/{int(rec['frame']):06d}"


def frame_corruption(table: Optional[dict[str, str]], img_id: str) -> Optional[str]:
    """The corruption of frame ``img_id`` (``None``: clean, or no sidecar)."""
    return None if table is None else table.get(img_id)
