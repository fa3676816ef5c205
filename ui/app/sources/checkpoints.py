"""Which model a recognizer checkpoint is, read from the config it defines without reading its
tensors (memory-mapped): TSN (no temporal shift) or TSM."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from ...models import TSM, TSN

__all__ = ["model_of_checkpoint"]


def model_of_checkpoint(path: Path) -> Optional[str]:
    """``'TSN'`` or ``'TSM'`` for a recognizer checkpoint of any layout
    :func:`tsm_apps.load_checkpoint` reads; None when it is not a readable recognizer."""
    from tsm_apps.checkpoint.reading import checkpoint_config
    from tsm_apps.io import safe_load

    try:
        ckpt = safe_load(path, mmap=True)
        fields = checkpoint_config(ckpt, Path(path).name)[2] if isinstance(ckpt, dict) else {}
    except (ValueError, OSError):
        return None
    if "num_classes" not in fields:
        return None
    return TSN if fields.get("shift") is None else TSM
