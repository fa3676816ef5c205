"""VID evaluation results on disk: ``metrics.json`` writing, the Markdown table of ``tsm detect
test`` and the lookup of the latest TSN/TSM results for the app.

``metrics.json`` is one flat JSON object written by :func:`write_metrics`: the keys of
:func:`detection.vid_eval.evaluate_vid` (``mAP``, ``mAP_slow``, ``mAP_medium``, ``mAP_fast``,
``mAP_corrupted`` in percent or ``null``; ``AP_<class>``; ``n_gt...``). A run's layout is
``<runs>/detection/{tsn,tsm}/test/metrics.json`` (``<runs>/demo/detection/...`` for ``make demo``).
A frame of ``results.json`` is named by :func:`frame_path`. This module imports neither mmdet
nor mmengine.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any, Mapping, Optional

from tsm_apps.io import atomic_write_text, read_json

SPLITS = {
    "overall": "mAP",
    "slow": "mAP_slow",
    "medium": "mAP_medium",
    "fast": "mAP_fast",
    "corrupted": "mAP_corrupted",
}
MODELS = {"TSN": "tsn", "TSM": "tsm"}
GT_COUNT = {"overall": "n_gt", "slow": "n_gt_slow", "medium": "n_gt_medium", "fast": "n_gt_fast"}


def frame_path(img_path: str) -> str:
    """A frame's name in ``results.json`` and wherever its detections are matched: its image
    path made absolute against the current folder (``""`` stays ``""``). ``tsm detect test``
    writes it, so the file reads the same from any folder; a relative path (a file written
    before) is taken from the current folder, as its annotation is."""
    return os.path.abspath(img_path) if img_path else ""


class VIDResultsNotFound(FileNotFoundError):
    """No ``metrics.json`` of a VID evaluation under the runs folder."""


def _plain(value: Any, key: str) -> Any:
    """JSON-ready scalar: numpy/torch scalars -> float/int, NaN -> None."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, int):
        return value
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"metrics[{key!r}] is {type(value).__name__}, not a number") from None
    return None if math.isnan(value) else value


def clean_metrics(metrics: Mapping[str, Any]) -> dict:
    """``metrics`` with an mmengine prefix (``"vid/mAP"`` -> ``"mAP"``) removed and values made
    plain JSON scalars."""
    return {str(k).rsplit("/", 1)[-1]: _plain(v, str(k)) for k, v in metrics.items()}


def write_metrics(path: str | os.PathLike, metrics: Mapping[str, Any]) -> Path:
    """Write ``metrics`` (see :func:`clean_metrics`) as JSON to ``path`` atomically (tmp +
    ``os.replace``), creating the folder; returns the path."""
    return atomic_write_text(path, json.dumps(clean_metrics(metrics), indent=2) + "\n")


def _fmt(value: Any) -> str:
    return "-" if value is None else f"{value:.1f}"


def format_table(metrics: Mapping[str, Any], per_class: bool = True) -> str:
    """Markdown table of one evaluation: mAP (%) overall / slow / medium / fast / corrupted with
    the number of GT boxes of each split, then (``per_class``) the AP of each class."""
    m = clean_metrics(metrics)
    lines = ["| split | mAP (%) | GT boxes |", "|---|---:|---:|"]
    for split, key in SPLITS.items():
        n = m.get(GT_COUNT.get(split, ""))
        lines.append(f"| {split} | {_fmt(m.get(key))} | {'-' if n is None else n} |")
    kinds = sorted(k for k in m if k.startswith("mAP_corrupted_"))
    lines += [f"| corrupted: {k[len('mAP_corrupted_') :]} | {_fmt(m[k])} | - |" for k in kinds]
    if "mAP_clean" in m:
        lines.append(f"| clean frames | {_fmt(m['mAP_clean'])} | - |")
    classes = [k for k in m if k.startswith("AP_")]
    if per_class and classes:
        lines += ["", "| class | AP (%) |", "|---|---:|"]
        lines += [f"| {k[3:]} | {_fmt(m[k])} |" for k in classes]
    return "\n".join(lines)


def _candidates(runs: Path) -> list[Path]:
    return [runs / "detection", runs / "demo" / "detection"]


def _read(path: Path) -> dict:
    try:
        data = read_json(path)
    except (OSError, ValueError) as e:
        raise ValueError(f"{path}: unreadable VID metrics ({e})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object of metrics, got {type(data).__name__}")
    return data


def latest_vid_results(
    runs: str | os.PathLike,
) -> tuple[dict[str, dict[str, Optional[float]]], Path]:
    """The latest VID evaluation of the TSN and TSM detectors under ``runs``.

    Looks at ``<runs>/detection/{tsn,tsm}/test/metrics.json`` and
    ``<runs>/demo/detection/{tsn,tsm}/test/metrics.json`` and takes the folder whose newest
    ``metrics.json`` is the most recent. Returns ``({"TSN": {"overall", "slow", "medium", "fast",
    "corrupted"}, "TSM": {...}}, folder)`` with mAP in percent (``None`` where not measured);
    a model without results is absent. Raises :class:`VIDResultsNotFound` when there is none
    and ``ValueError`` naming a file that is not a metrics object.
    """
    runs = Path(runs)
    best: Optional[tuple[float, Path, dict[str, Path]]] = None
    for base in _candidates(runs):
        files = {name: base / sub / "test" / "metrics.json" for name, sub in MODELS.items()}
        files = {n: f for n, f in files.items() if f.is_file()}
        if files:
            stamp = max(f.stat().st_mtime for f in files.values())
            if best is None or stamp > best[0]:
                best = (stamp, base, files)
    if best is None:
        looked = ", ".join(
            str(b / "{tsn,tsm}" / "test" / "metrics.json") for b in _candidates(runs)
        )
        raise VIDResultsNotFound(
            f"no VID evaluation found (looked for {looked}); run "
            f"`make demo` (or `tsm detect test ...`) first"
        )
    _, base, files = best
    table = {}
    for name, path in files.items():
        data = clean_metrics(_read(path))
        table[name] = {split: data.get(key) for split, key in SPLITS.items()}
    return table, base
