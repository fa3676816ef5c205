"""Checks of ``tsm train``'s inputs before any video is decoded or a model built.

The clip sets decode the whole data set into memory when they are built, and the model loads
``--pretrained`` after that; a wrong path or a checkpoint of an unknown layout would otherwise
surface minutes later. :func:`check_inputs` reads the list files (``file:line`` errors), checks
that every listed video exists, and opens ``--pretrained`` safely with its tensors memory-mapped
(not read: :func:`~tsm_apps.checkpoint.opening.open_checkpoint` reads them once, when the model
is built) and names its layout problem.
"""

from __future__ import annotations

from pathlib import Path

from .config import TrainConfig


def check_pretrained(path: str) -> str:
    """The layout of a ``--pretrained`` checkpoint; raises naming the file and the problem."""
    from ..io import read_checkpoint  # torch only: a file that is no checkpoint fails here

    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"--pretrained: checkpoint not found: {p}")
    ckpt = read_checkpoint(p, mmap=True)  # the keys and shapes; the tensors stay on disk
    from ..checkpoint.reading import checkpoint_config  # the layouts need the model zoo

    try:
        return checkpoint_config(ckpt, p.name)[0]
    except ValueError as e:
        raise ValueError(f"--pretrained {p}: {e}") from None


def check_lists(cfg: TrainConfig) -> None:
    """Both list files parse and every video they name exists (no decoding)."""
    from ..data.lists import read_tsm_list as read_list

    for lst in cfg.data.lists():
        for r in read_list(lst):
            if not Path(r.path).exists():
                raise FileNotFoundError(f"{lst}: video {r.path} not found")


def check_inputs(cfg: TrainConfig, data: bool = True) -> None:
    """``--pretrained`` first (the cheapest to get wrong), then the lists when ``data``."""
    if cfg.model.pretrained:
        check_pretrained(cfg.model.pretrained)
    if data:
        check_lists(cfg)
