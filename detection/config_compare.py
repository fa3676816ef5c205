"""Where two detector configs differ once resolved (``_base_`` files merged): the settings a
TSN-vs-TSM comparison holds equal and the ones it changes, read from the configs themselves."""

from __future__ import annotations

import os
from typing import Any, Mapping

from .inference import load_config

MISSING = "<unset>"


def flat_settings(cfg: Mapping, prefix: str = "") -> dict:
    """``{"model.backbone.shift": value, ...}``: every leaf of a nested config dict (lists and
    tuples are leaves)."""
    out = {}
    for k, v in cfg.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping):
            out.update(flat_settings(v, key + "."))
        else:
            out[key] = v
    return out


def config_differences(a: str | os.PathLike, b: str | os.PathLike) -> dict:
    """``{setting: (value in a, value in b)}`` where the resolved configs ``a`` and ``b`` (files
    or bundled names) differ; :data:`MISSING` where one does not set it."""
    fa, fb = (flat_settings(load_config(p).to_dict()) for p in (a, b))
    return {
        k: (fa.get(k, MISSING), fb.get(k, MISSING))
        for k in sorted(set(fa) | set(fb))
        if fa.get(k, MISSING) != fb.get(k, MISSING)
    }


def setting(path: str | os.PathLike, key: str) -> Any:
    """One setting of a resolved config (``"train_cfg.max_iters"``); :data:`MISSING` if unset."""
    return flat_settings(load_config(path).to_dict()).get(key, MISSING)
