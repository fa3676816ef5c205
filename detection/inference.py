"""A trained ``ClipRFCN`` ready for inference: found, loaded, its answers read and drawn.

:func:`load_detector` builds the model of a config (a training work folder holds the resolved
``config.py`` and ``final.pth``) on CPU or CUDA, with the config's test pipeline (resize,
normalise, pad) for frames in memory. :func:`frame_result` reads a frame's boxes (in the frame's
own pixels); :func:`draw_detections` draws them. Streaming frames through it (one video, or many
streams at once) is :mod:`detection.live`'s.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional, Sequence

import numpy as np
import torch
from torch import nn

from tsm_apps.distributed import auto_device
from tsm_apps.viz import draw_boxes

from .checkpoint import load_detector_weights
from .records import FrameDetections

CONFIG_NAMES = ("config.py",)
CHECKPOINT_NAMES = ("final.pth", "latest.pth")
DEFAULT_SCORE_THR = 0.3
BOX_COLOR = (255, 64, 64)  # detections drawn on frames (tsm detect video, tsm live)


@dataclass
class Detector:
    """A loaded detector: the mmdet model (eval mode), its test pipeline and class names."""

    model: nn.Module
    pipeline: Callable[[dict], dict]
    classes: tuple
    device: torch.device
    config_path: Optional[Path] = None
    checkpoint_path: Optional[Path] = None


def _iter_number(p: Path) -> int:
    digits = "".join(c for c in p.stem if c.isdigit())
    return int(digits) if digits else -1


def find_run_files(folder: str | os.PathLike) -> tuple[Path, Path]:
    """``(config, checkpoint)`` of a training work folder: ``config.py`` (else the only
    ``*.py``) and ``final.pth`` (else the ``iter_N.pth`` with the largest ``N``)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"detector folder not found: {folder}")
    configs = [folder / n for n in CONFIG_NAMES if (folder / n).is_file()] or sorted(
        folder.glob("*.py")
    )
    if len(configs) != 1 and not (folder / CONFIG_NAMES[0]).is_file():
        raise ValueError(
            f"{folder}: expected a config.py (written by `tsm detect train`), "
            f"found {[c.name for c in configs] or 'no .py file'}"
        )
    ckpts = [folder / n for n in CHECKPOINT_NAMES if (folder / n).is_file()] or sorted(
        folder.glob("*.pth"), key=lambda p: (_iter_number(p), p.stat().st_mtime)
    )[::-1]
    if not ckpts:
        raise FileNotFoundError(f"{folder}: no checkpoint (final.pth or iter_N.pth)")
    return configs[0], ckpts[0]


CONFIG_DIR = Path(__file__).resolve().parent / "configs"
"""The bundled configs: ``tsm detect train rfcn_synth_tsm`` names ``configs/rfcn_synth_tsm.py``."""


def resolve_config(path: str | os.PathLike) -> Path:
    """``path`` when it is a file, else the bundled config of that name (``rfcn_synth_tsm`` or
    ``rfcn_synth_tsm.py``). Raises FileNotFoundError naming both places."""
    path = Path(path)
    if path.is_file():
        return path
    bundled = CONFIG_DIR / (path.name if path.suffix == ".py" else f"{path.name}.py")
    if len(path.parts) == 1 and bundled.is_file():
        return bundled
    raise FileNotFoundError(
        f"config not found: {path} (nor a bundled config of that name in {CONFIG_DIR})"
    )


def load_config(path: str | os.PathLike, options: Optional[dict] = None):
    """mmengine ``Config`` of ``path`` or of a bundled config's name (:func:`resolve_config`;
    ``options``: ``--cfg-options`` style overrides)."""
    from mmengine.config import Config

    path = resolve_config(path)
    try:
        cfg = Config.fromfile(str(path))
    except Exception as e:  # syntax errors, missing _base_ files, bad imports
        raise ValueError(f"cannot read config {path}: {type(e).__name__}: {e}") from None
    if options:
        cfg.merge_from_dict(options)
    return cfg


def _test_pipeline(cfg) -> Callable[[dict], dict]:
    """The config's test pipeline with the file loader replaced by an in-memory one."""
    from mmcv.transforms import Compose

    loader = cfg.get("test_dataloader") or cfg.get("val_dataloader")
    steps = [dict(t) for t in (loader or {}).get("dataset", {}).get("pipeline", [])]
    if not steps or "LoadImage" not in steps[0].get("type", ""):
        raise ValueError(
            "the config's test_dataloader.dataset.pipeline must start with "
            f"LoadImageFromFile; got {[s.get('type') for s in steps]}"
        )
    steps[0] = dict(type="mmdet.LoadImageFromNDArray")
    steps = [s for s in steps if "LoadAnnotations" not in s.get("type", "")]
    pack = steps[-1]
    keys = tuple(pack.get("meta_keys", ()))
    pack["meta_keys"] = keys + tuple(
        k
        for k in ("img_id", "ori_shape", "img_shape", "scale_factor", "video", "frame_id")
        if k not in keys
    )
    return Compose(steps)


def _classes(cfg, meta: dict) -> tuple:
    names = (meta.get("dataset_meta") or {}).get("classes")
    if names:
        return tuple(str(c) for c in names)
    loader = cfg.get("test_dataloader") or {}
    names = ((loader.get("dataset") or {}).get("metainfo") or {}).get("classes")
    if names:
        return tuple(names)
    from .vid_dataset import ImageNetVIDDataset

    return tuple(ImageNetVIDDataset.METAINFO["classes"])


def load_detector(
    folder_or_config: str | os.PathLike,
    checkpoint: Optional[str | os.PathLike] = None,
    device: Optional[str | torch.device] = None,
    cfg_options: Optional[dict] = None,
) -> Detector:
    """A :class:`Detector` in eval mode from a work folder (``config.py`` + ``final.pth``, see
    :func:`find_run_files`) or from a config file and ``checkpoint``. ``device``: default CUDA
    when present, else CPU. Weights are loaded with ``weights_only=True`` and must fit the
    config's model exactly (ValueError naming the differing keys otherwise)."""
    from mmdet.registry import MODELS  # our classes are registered: this module's package
    from mmengine.registry import init_default_scope
    # (detection/__init__.py) imported them before this module

    path = Path(folder_or_config)
    if not path.exists():
        raise FileNotFoundError(f"detector folder or config not found: {path}")
    if path.is_dir():
        config_path, found = find_run_files(path)
        checkpoint = checkpoint or found
    else:
        config_path = path
        if checkpoint is None:
            raise ValueError(f"{path} is a config file: give the checkpoint too")
    cfg = load_config(config_path, cfg_options)
    init_default_scope(cfg.get("default_scope", "mmdet"))
    device = torch.device(device) if device else auto_device()
    model = MODELS.build(cfg.model)
    meta = load_detector_weights(model, checkpoint)
    classes = _classes(cfg, meta)
    n = getattr(getattr(getattr(model, "roi_head", None), "bbox_head", None), "num_classes", None)
    if n is not None and n != len(classes):
        raise ValueError(
            f"{checkpoint}: {len(classes)} class names for a model of {n} classes "
            f"({config_path}); the checkpoint's dataset_meta or the config's "
            "test_dataloader.dataset.metainfo must list them"
        )
    model.to(device).eval()
    return Detector(model, _test_pipeline(cfg), classes, device, config_path, Path(checkpoint))


def frame_result(i: int, sample, classes: Sequence[str], score_thr: float) -> FrameDetections:
    """Frame ``i``'s :class:`FrameDetections` from an mmdet data sample's ``pred_instances``:
    boxes scoring at least ``score_thr``, best first, named by ``classes``."""
    pred = sample.pred_instances
    scores = pred.scores.detach().cpu().float().numpy()
    keep = np.flatnonzero(scores >= score_thr)
    keep = keep[np.argsort(-scores[keep], kind="stable")]
    ids = pred.labels.detach().cpu().numpy().astype(np.int64)[keep]
    boxes = pred.bboxes.detach().cpu().float().numpy().reshape(-1, 4)[keep]
    names = tuple(classes[j] if 0 <= j < len(classes) else str(j) for j in ids.tolist())
    return FrameDetections(boxes.astype(np.float32), scores[keep].astype(np.float32), ids, names, i)


def draw_detections(frame: np.ndarray, result: FrameDetections, color=BOX_COLOR) -> np.ndarray:
    """A copy of uint8 RGB ``frame (H, W, 3)`` with ``result``'s boxes outlined and captioned
    ``"<label> <score>"``."""
    captions = [f"{name} {score:.2f}" for name, score in zip(result.labels, result.scores.tolist())]
    return draw_boxes(frame, result.boxes, captions, color=color, width=None)
