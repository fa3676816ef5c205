"""Checks of a dissection job's inputs, all before any frame is decoded.

:func:`check_inputs` opens the checkpoint once (:func:`tsm_apps.evaluation.open_checkpoint`:
exists, loads safely, known key layout, a classifier; its model, class names and test protocol),
lists the videos (paths exist, list lines parse, frame counts from the container), reads the
class-name file, and checks ``--class-index`` and the data's classes against the model.
Every failure is a ValueError / FileNotFoundError naming the file (and line) and what was
expected; the CLI prints it on one line and exits 2.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Optional

from tsm_apps.data.protocol import TestProtocol
from tsm_apps.evaluation.recognition import Checkpoint, open_checkpoint

from .clips import ClipEntry, load_entries, resolve_data
from .storage import read_json

NEEDS_CLASSIFIER = "dissection needs a recognizer with its class scores (no fc weights found)"


@dataclass
class CheckedInputs:
    """What the checks found: the opened checkpoint (model on the job's device), its layout and
    class count, its test protocol (with the job's changes), the clips to process, the class
    names, the input channels per segment (3: RGB) and the flow stream's checked inputs (when
    asked for)."""

    checkpoint: Checkpoint
    layout: str
    num_classes: int
    protocol: TestProtocol
    entries: List[ClipEntry]
    names: List[str]
    in_channels: int = 3
    flow: Optional[Any] = None


def check_checkpoint(
    path: str,
    device: Any = "cpu",
    segments: Optional[int] = None,
    classes_file: Optional[str] = None,
    **protocol_options: Any,
) -> Checkpoint:
    """The checkpoint opened on ``device``; raises naming the file and the problem."""
    return open_checkpoint(
        path,
        classes_file,
        device=device,
        segments=segments,
        what=NEEDS_CLASSIFIER,
        **protocol_options,
    )


def _data_classes(data: str) -> Optional[list]:
    """Class names of the data's ``annotations.json`` (None without one)."""
    ann = resolve_data(data)[1]
    classes = read_json(ann).get("classes") if ann else None
    return [str(c) for c in classes] if classes else None


def check_inputs(
    checkpoint: str,
    data: str,
    limit: Optional[int] = None,
    class_index: Optional[int] = None,
    classes_file: Optional[str] = None,
    protocol_options: Optional[dict] = None,
    device: Any = "cpu",
    segments: Optional[int] = None,
) -> CheckedInputs:
    """Validate everything a dissection job reads (see the module docstring); the clips follow
    the checkpoint's test protocol changed by ``protocol_options`` (``clips``, ``crop_size``,
    ``scale_size``, ``view``; None values keep the checkpoint's); ``segments``: ``T`` (None:
    the checkpoint's test segments)."""
    ck = check_checkpoint(checkpoint, device, segments, classes_file, **(protocol_options or {}))
    k = len(ck.names)
    if class_index is not None and not 0 <= class_index < k:
        raise ValueError(
            f"--class-index {class_index} out of range: checkpoint {checkpoint} "
            f"has {k} classes (valid 0..{k - 1})"
        )
    data_names = _data_classes(data)
    if data_names is not None and len(data_names) != k:
        raise ValueError(
            f"checkpoint {checkpoint} does not match the data: the model has "
            f"{k} classes, {data} has {len(data_names)}"
        )
    entries = load_entries(data, limit, ck.protocol.clips)
    bad = next((e for e in entries if e.label is not None and not 0 <= e.label < k), None)
    if bad is not None:
        raise ValueError(
            f"{bad.path}: label {bad.label} out of range for the {k}-class checkpoint {checkpoint}"
        )
    names = ck.names
    if classes_file is None and data_names and names == [f"class {i}" for i in range(k)]:
        names = data_names
    return CheckedInputs(
        ck, ck.layout, k, ck.protocol, entries, names, int(ck.model.config.in_channels)
    )
