"""TSM Apps: the shared Temporal Shift Module backbone package.

The public API below is loaded on first use (PEP 562), so ``import tsm_apps`` — and every ``tsm``
command's early input checks — do not pay for torchvision's model zoo until a model is needed.
Never imports mmdet/mmengine/mmcv, nor detection/dissect/ui (tests check both in a subprocess).
"""

from __future__ import annotations

from . import checkpoint, models  # light: both load their own names on first use
from .lazy import lazy_exports

# the public names are those of the two subpackages, served through their own lazy exports
__all__, __getattr__, __dir__ = lazy_exports(
    __name__, {".models": models.__all__, ".checkpoint": checkpoint.__all__}
)
