"""Detector checkpoints at the ``weights_only=True`` boundary.

Torch >= 2.6 loads with ``weights_only=True`` by default, and mmengine 0.10.7's loader then fails
on its own training checkpoints (``iter_N.pth``): their ``message_hub`` pickles mmengine
``HistoryBuffer`` objects (numpy arrays plus ``getattr`` references to its statistics methods,
which no safe allow-list should admit) and the meta can hold numpy scalars. We never turn
``weights_only`` off; instead ``PlainCheckpointHook`` (:mod:`detection.hooks`, added by
``tsm detect train``) makes
every checkpoint it saves plain data — history buffers as ``{"__history_buffer__": ...}``
dicts of lists, numpy values as Python numbers/lists — and turns the buffers back into
``HistoryBuffer`` objects when a run resumes, so mmengine's ``resume`` works with the default
``torch.load``. :func:`safe_loading` additionally admits numpy arrays/scalars/dtypes (plain
data) for checkpoints written elsewhere. The file written at the end of training,
``final.pth``, is plain as well::

    {"format": "detection.rfcn/1", "state_dict": {...}, "meta": {"dataset_meta": {"classes":
     [...]}, "iter": int, "config": "<the resolved mmengine config as text>"}}
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any, Iterator, Optional

import numpy as np
import torch
from torch import nn

from tsm_apps.checkpoint.reading import state_dict_of
from tsm_apps.io import atomic_save, numpy_safe_globals, read_checkpoint

FORMAT = "detection.rfcn/1"


def mm_safe_globals() -> list:
    """numpy arrays, scalars and dtypes: plain data that checkpoints of other tools may hold."""
    return numpy_safe_globals()


@contextlib.contextmanager
def safe_loading() -> Iterator[None]:
    """Within the block, ``torch.load(weights_only=True)`` (mmengine's resume and
    ``load_checkpoint``) also accepts :func:`mm_safe_globals`."""
    with torch.serialization.safe_globals(mm_safe_globals()):
        yield


def plain(obj: Any) -> Any:
    """``obj`` with numpy scalars/arrays turned into Python numbers/lists (recursively through
    dicts, lists and tuples); other objects are returned unchanged."""
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, dict):
        return {k: plain(v) for k, v in obj.items()}
    if type(obj) in (list, tuple):
        return type(obj)(plain(v) for v in obj)
    return obj


HISTORY_KEY = "__history_buffer__"


def buffers_to_plain(log_scalars: dict) -> dict:
    """mmengine ``HistoryBuffer`` values -> ``{HISTORY_KEY: 1, "max_length", "log", "count"}``."""
    from mmengine.logging import HistoryBuffer

    out = {}
    for key, buf in log_scalars.items():
        if isinstance(buf, HistoryBuffer):
            log, count = buf.data
            buf = {
                HISTORY_KEY: 1,
                "max_length": int(buf.max_length),
                "log": np.asarray(log).tolist(),
                "count": np.asarray(count).tolist(),
            }
        out[key] = buf
    return out


def buffers_from_plain(log_scalars: dict) -> dict:
    """Inverse of :func:`buffers_to_plain` (other values unchanged)."""
    from mmengine.logging import HistoryBuffer

    return {
        key: HistoryBuffer(buf["log"], buf["count"], buf["max_length"])
        if isinstance(buf, dict) and buf.get(HISTORY_KEY)
        else buf
        for key, buf in log_scalars.items()
    }


def read_detector_checkpoint(path: str | os.PathLike) -> dict:
    """A detector checkpoint (``final.pth`` or mmengine's ``iter_N.pth``) loaded with
    ``weights_only=True`` on CPU; ``FileNotFoundError`` / ``ValueError`` naming the file."""
    return read_checkpoint(path)


def load_detector_weights(model: nn.Module, path: str | os.PathLike) -> dict:
    """Load ``path`` into ``model`` (strict); ValueError listing missing/unexpected keys and
    shape conflicts when it does not fit. Returns the checkpoint's ``meta`` (may be empty)."""
    ckpt = read_detector_checkpoint(path)
    sd = state_dict_of(ckpt, path)
    own = model.state_dict()
    missing = sorted(set(own) - set(sd))
    unexpected = sorted(set(sd) - set(own))
    conflicts = [
        f"{k}: {tuple(sd[k].shape)} vs model {tuple(own[k].shape)}"
        for k in sorted(set(sd) & set(own))
        if sd[k].shape != own[k].shape
    ]
    if missing or unexpected or conflicts:
        raise ValueError(
            f"checkpoint {path} does not fit the config's model: "
            f"{len(missing)} missing {missing[:6]}, {len(unexpected)} unexpected "
            f"{unexpected[:6]}, {len(conflicts)} shape conflicts {conflicts[:6]}"
        )
    model.load_state_dict(sd, strict=True)
    meta = ckpt.get("meta") or {}
    return meta if isinstance(meta, dict) else {}


def save_final(
    path: str | os.PathLike,
    model: nn.Module,
    classes: Optional[list] = None,
    iteration: Optional[int] = None,
    config_text: str = "",
) -> Path:
    """Write the plain ``final.pth`` of the module docstring atomically (tmp + rename)."""
    model = getattr(model, "module", model)  # DDP
    obj = {
        "format": FORMAT,
        "state_dict": {k: v.detach().cpu() for k, v in model.state_dict().items()},
        "meta": plain(
            {
                "dataset_meta": {"classes": [str(c) for c in classes or []]},
                "iter": None if iteration is None else int(iteration),
                "config": str(config_text),
            }
        ),
    }
    return atomic_save(obj, path)
