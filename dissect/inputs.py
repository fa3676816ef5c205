"""Checks of a dissection job's inputs, all before any frame is decoded or a model is built.

:func:`check_inputs` reads the checkpoint once (exists, loads safely, known key layout, class
count), lists the videos (paths exist, list lines parse, frame counts from the container), reads
the class-name file, and checks ``--class-index`` and the data's classes against the model.
Every failure is a ValueError / FileNotFoundError naming the file (and line) and what was
expected; the CLI prints it on one line and exits 2.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, List, Optional

from tsm_apps.data.classes import class_names
from tsm_apps.data.protocol import TestProtocol, protocol_for

from .clips import ClipEntry, load_entries, resolve_data
from .storage import read_json


@dataclass
class CheckedInputs:
    """What the checks found: the checkpoint's layout and class count, its test protocol (with
    the job's changes), the clips to process, the class names, the input channels per segment
    (3: RGB) and the flow stream's checked inputs (when asked for)."""
    layout: str
    num_classes: int
    protocol: TestProtocol
    entries: List[ClipEntry]
    names: List[str]
    in_channels: int = 3
    flow: Optional[Any] = None


def check_checkpoint(path: str) -> tuple:
    """``(checkpoint dict, layout, config fields)``; raises naming the file and the problem."""
    from tsm_apps.checkpoint.reading import inspect_checkpoint

    return inspect_checkpoint(path, "dissection needs a recognizer with its class scores (no "
                                    "fc weights found)")


def _data_classes(data: str) -> Optional[list]:
    """Class names of the data's ``annotations.json`` (None without one)."""
    ann = resolve_data(data)[1]
    classes = read_json(ann).get("classes") if ann else None
    return [str(c) for c in classes] if classes else None


def check_inputs(checkpoint: str, data: str, limit: Optional[int] = None,
                 class_index: Optional[int] = None, classes_file: Optional[str] = None,
                 protocol_options: Optional[dict] = None) -> CheckedInputs:
    """Validate everything a dissection job reads (see the module docstring); the clips follow
    the checkpoint's test protocol changed by ``protocol_options`` (``clips``, ``crop_size``,
    ``scale_size``, ``view``; None values keep the checkpoint's)."""
    ckpt, layout, fields = check_checkpoint(checkpoint)
    protocol = protocol_for(layout, ckpt, Path(checkpoint).name).with_options(
        **(protocol_options or {}))
    k = int(fields["num_classes"])
    if class_index is not None and not 0 <= class_index < k:
        raise ValueError(f"--class-index {class_index} out of range: checkpoint {checkpoint} "
                         f"has {k} classes (valid 0..{k - 1})")
    data_names = _data_classes(data)
    if data_names is not None and len(data_names) != k:
        raise ValueError(f"checkpoint {checkpoint} does not match the data: the model has "
                         f"{k} classes, {data} has {len(data_names)}")
    entries = load_entries(data, limit, protocol.clips)
    bad = next((e for e in entries if e.label is not None and not 0 <= e.label < k), None)
    if bad is not None:
        raise ValueError(f"{bad.path}: label {bad.label} out of range for the {k}-class "
                         f"checkpoint {checkpoint}")
    names = class_names(k, ckpt, classes_file, file_name=Path(checkpoint).name)
    if classes_file is None and data_names and names == [f"class {i}" for i in range(k)]:
        names = data_names
    return CheckedInputs(layout, k, protocol, entries, names, int(fields.get("in_channels", 3)))
