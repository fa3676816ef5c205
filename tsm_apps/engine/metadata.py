"""What travels inside an engine file: one ONNX ``metadata_props`` entry, ``tsm_apps.engine``,
holding JSON of :class:`EngineInfo` -- the model's kind (``offline`` clip model or ``online``
step model), its segments ``T``, input size, class names, precision, the source checkpoint's
name, the parity figures the gate measured and the test protocol
(:meth:`TestProtocol.to_dict`, the one definition of a protocol), so ``tsm test m.onnx`` sees the
pixels the checkpoint's own ``tsm test`` sees.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import List

from ..data.protocol import TestProtocol

KEY = "tsm_apps.engine"
KINDS = ("offline", "online")

__all__ = ["EngineInfo", "KEY", "KINDS", "read_info", "write_info", "info_from_map"]


@dataclass
class EngineInfo:
    """One engine file's description (module docstring); ``parity``: the gate's figures."""

    kind: str
    num_segments: int
    input_size: int
    names: List[str]
    protocol: TestProtocol
    precision: str = "fp32"
    checkpoint: str = ""
    arch: str = ""
    parity: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"engine kind must be one of {KINDS}, got {self.kind!r}")

    def to_json(self) -> str:
        d = asdict(self)
        d["protocol"] = self.protocol.to_dict()
        return json.dumps(d)

    @classmethod
    def from_json(cls, text: str, where: str) -> "EngineInfo":
        try:
            d = json.loads(text)
            d["protocol"] = TestProtocol.from_dict(d["protocol"])
            return cls(**d)
        except (ValueError, KeyError, TypeError) as e:
            raise ValueError(f"{where}: unreadable '{KEY}' metadata ({e})") from None


def info_from_map(props: dict, where: str) -> EngineInfo:
    """The :class:`EngineInfo` in ``props`` (``{key: value}`` metadata of the file ``where``)."""
    if KEY not in props:
        raise ValueError(f"{where}: no '{KEY}' metadata: not an engine written by tsm export")
    return EngineInfo.from_json(props[KEY], where)


def write_info(path: str | os.PathLike, info: EngineInfo) -> None:
    """Store ``info`` in the ONNX file ``path`` (rewritten in place: callers write a temporary
    file and rename it, :func:`tsm_apps.io.atomic_path`)."""
    import onnx

    model = onnx.load(str(path))
    props = {p.key: p.value for p in model.metadata_props}
    onnx.helper.set_model_props(model, {**props, KEY: info.to_json()})
    onnx.save(model, str(path))


def read_info(path: str | os.PathLike) -> EngineInfo:
    """The :class:`EngineInfo` stored in the ONNX file ``path`` (ValueError naming it)."""
    import onnx

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"engine file not found: {path}")
    model = onnx.load(str(path), load_external_data=False)
    return info_from_map({p.key: p.value for p in model.metadata_props}, str(path))
