"""Class names for a recognizer's outputs: from a file, from the checkpoint, or a bundled list.

:func:`class_names` resolves, in this order:

1. ``classes_file``: one name a line (``index name`` lines allowed), or Something-Something's
   ``labels.json`` (``{name: id}``) or a JSON list of names;
2. names stored in our checkpoints (``meta["classes"]``, written by ``tsm train``);
3. a bundled list chosen from the checkpoint file name when its class count matches:
   official TSM names (``TSM_kinetics_RGB_...``, ``TSM_something_RGB_...``,
   ``TSM_somethingv2_RGB_...``) and mmaction2 names (``..._kinetics400-rgb_...``,
   ``..._sthv1-rgb_...``, ``..._sthv2-rgb_...``);
4. ``"class <i>"``.

Bundled lists (``tsm_apps/data/labels/``), written from the public label lists:

* ``kinetics400.txt``: the 400 Kinetics classes in the order of the official label map
  (``kinetics_label_map.txt`` read by the official ``tools/gen_label_kinetics.py``; mmaction2's
  ``label_map_k400.txt``): alphabetical, case-insensitive. The official script replaced spaces
  by ``_`` in folder names only; the index order is the same.
* ``something_v2.txt``: the 174 classes in ``labels.json`` id order (official
  ``tools/gen_label_sthv2.py`` asserts ids run 0..173 in file order; mmaction2's
  ``tools/data/sthv2/label_map.txt``).
* ``something_v1.txt``: the 174 classes of ``something-something-v1-labels.csv`` sorted (the
  official ``tools/gen_label_sthv1.py`` calls ``sorted``); ``something_v1_mmaction2.txt`` keeps
  the CSV order of mmaction2's ``tools/data/sthv1/label_map.txt``.
"""
from __future__ import annotations

import json
import os
import re
from importlib import resources
from pathlib import Path
from typing import Optional, Union

__all__ = ["class_names", "read_class_file", "bundled_classes", "bundled_list_for",
           "BUNDLED"]

PathLike = Union[str, os.PathLike]
BUNDLED = {"kinetics400": "kinetics400.txt", "something_v1": "something_v1.txt",
           "something_v1_mmaction2": "something_v1_mmaction2.txt",
           "something_v2": "something_v2.txt"}
_OFFICIAL_DATASETS = {"kinetics": "kinetics400", "something": "something_v1",
                      "somethingv1": "something_v1", "somethingv2": "something_v2"}
_MMACTION2_DATASETS = (("kinetics400", "kinetics400"), ("k400", "kinetics400"),
                       ("sthv2", "something_v2"), ("sthv1", "something_v1_mmaction2"))


def bundled_classes(name: str) -> list:
    """A bundled list by key of :data:`BUNDLED` (e.g. ``"kinetics400"``)."""
    if name not in BUNDLED:
        raise ValueError(f"no bundled class list {name!r}; bundled: {sorted(BUNDLED)}")
    text = resources.files(__package__).joinpath("labels", BUNDLED[name]).read_text("utf-8")
    return [line.strip() for line in text.splitlines() if line.strip()]


def bundled_list_for(file_name: str) -> Optional[str]:
    """Key of the bundled list that a checkpoint file name implies, or None.

    ``TSM_<dataset>_RGB_...`` (official) names the dataset in its second token; mmaction2
    names contain ``kinetics400``/``sthv1``/``sthv2`` between ``_`` and ``-``/``_``.
    """
    stem = Path(file_name).name
    tokens = stem.split("_")
    if len(tokens) >= 3 and tokens[0] == "TSM":
        return _OFFICIAL_DATASETS.get(tokens[1].lower())
    lowered = stem.lower()
    for key, name in _MMACTION2_DATASETS:
        if re.search(rf"(^|[_\-.]){key}([_\-.]|$)", lowered):
            return name
    return None


def read_class_file(path: PathLike) -> list:
    """Names from a class file: one a line (``index name`` allowed; blank lines skipped), a JSON
    ``{name: id}`` (Something-Something ``labels.json``) or a JSON list of names.

    Raises FileNotFoundError / ValueError naming the file (and line) that does not parse.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"class file not found: {path}")
    text = path.read_text(encoding="utf-8")
    if path.suffix.lower() == ".json" or text.lstrip()[:1] in ("{", "["):
        return _names_from_json(path, text)
    names = []
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        head, _, rest = line.partition(" ")
        names.append(rest.strip() if head.isdigit() and rest.strip() else line)
    if not names:
        raise ValueError(f"{path}: no class names (expected one a line)")
    return names


def _names_from_json(path: Path, text: str) -> list:
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}:{e.lineno}: not valid JSON ({e.msg})") from None
    if isinstance(raw, list) and all(isinstance(n, str) for n in raw):
        return list(raw)
    if not isinstance(raw, dict):
        raise ValueError(f"{path}: expected {{name: id}} or a list of names, "
                         f"got {type(raw).__name__}")
    try:
        by_id = {int(v): str(k) for k, v in raw.items()}
    except (TypeError, ValueError):
        raise ValueError(f"{path}: every class id must be an integer") from None
    if sorted(by_id) != list(range(len(raw))):
        raise ValueError(f"{path}: class ids must be 0..{len(raw) - 1}, each once")
    return [by_id[i] for i in range(len(raw))]


def _stored_names(ckpt: dict) -> list:
    meta = ckpt.get("meta")
    names = meta.get("classes") if isinstance(meta, dict) else None
    if isinstance(names, (list, tuple)) and all(isinstance(n, str) for n in names):
        return list(names)
    return []


def class_names(num_classes: int, checkpoint: PathLike | dict | None = None,
                classes_file: Optional[PathLike] = None,
                file_name: Optional[str] = None) -> list:
    """``num_classes`` names for a model's outputs (see the module docstring for the order).

    ``checkpoint`` is a checkpoint path (read safely; its file name can pick a bundled list) or
    an already-read checkpoint dict (then ``file_name``, its file's name, can pick a bundled
    list without reading the file again). A ``classes_file`` whose count differs from
    ``num_classes`` raises ValueError naming both counts; stored or bundled lists of another
    count are skipped.
    """
    if int(num_classes) < 1:
        raise ValueError(f"num_classes must be >= 1, got {num_classes}")
    n = int(num_classes)
    if classes_file is not None:
        names = read_class_file(classes_file)
        if len(names) != n:
            raise ValueError(f"{classes_file}: {len(names)} class names but the model has "
                             f"{n} classes")
        return names
    if checkpoint is not None:
        ckpt = checkpoint
        if not isinstance(checkpoint, dict):
            from ..io import read_checkpoint
            ckpt = read_checkpoint(checkpoint)
        names = _stored_names(ckpt)
        if len(names) == n:
            return names
        name = file_name if isinstance(checkpoint, dict) else str(checkpoint)
        key = bundled_list_for(name) if name else None
        if key is not None:
            names = bundled_classes(key)
            if len(names) == n:
                return names
    return [f"class {i}" for i in range(n)]
