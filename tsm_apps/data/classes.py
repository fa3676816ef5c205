"""Class-name lists: class files (:func:`read_class_file`) and the bundled lists
(:func:`bundled_classes`). Which names a checkpoint gets is
:func:`tsm_apps.checkpoint.identity.class_names`'s choice.

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

import os
from importlib import resources
from pathlib import Path
from typing import Union

from ..io import read_json
from .lists import ssv2_labels

__all__ = ["read_class_file", "bundled_classes", "BUNDLED"]

PathLike = Union[str, os.PathLike]
BUNDLED = {
    "kinetics400": "kinetics400.txt",
    "something_v1": "something_v1.txt",
    "something_v1_mmaction2": "something_v1_mmaction2.txt",
    "something_v2": "something_v2.txt",
}


def bundled_classes(name: str) -> list:
    """A bundled list by key of :data:`BUNDLED` (e.g. ``"kinetics400"``)."""
    if name not in BUNDLED:
        raise ValueError(f"no bundled class list {name!r}; bundled: {sorted(BUNDLED)}")
    text = resources.files(__package__).joinpath("labels", BUNDLED[name]).read_text("utf-8")
    return [line.strip() for line in text.splitlines() if line.strip()]


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
        return _names_from_json(path)
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


def _names_from_json(path: Path) -> list:
    raw = read_json(path)
    if isinstance(raw, list) and all(isinstance(n, str) for n in raw):
        return list(raw)
    if not isinstance(raw, dict):
        raise ValueError(
            f"{path}: expected {{name: id}} or a list of names, got {type(raw).__name__}"
        )
    by_name = ssv2_labels(raw, path)
    by_id = {i: name for name, i in by_name.items()}
    if sorted(by_id) != list(range(len(raw))):
        raise ValueError(f"{path}: class ids must be 0..{len(raw) - 1}, each once")
    return [by_id[i] for i in range(len(raw))]
