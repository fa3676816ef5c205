"""Precisions an exported ONNX file can be converted to before the parity gate: ``fp32`` (as
exported), ``fp16`` (weights and activations in float16, inputs and outputs kept float32:
ONNX Runtime's ``float16`` converter) and ``int8`` (static quantisation, QDQ, calibrated on the
given clips' inputs: ONNX Runtime's ``quantize_static``)."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Iterable, Optional

PRECISIONS = ("fp32", "fp16", "int8")
TOLERANCE = {"fp32": 1e-4, "fp16": 2e-2, "int8": 0.1}  # the gate's max |Δp| per precision

__all__ = ["PRECISIONS", "TOLERANCE", "convert"]


def to_fp16(path: Path) -> None:
    """Rewrite the ONNX file ``path`` in float16 (inputs/outputs stay float32)."""
    import onnx
    from onnxruntime.transformers.float16 import convert_float_to_float16

    model = convert_float_to_float16(onnx.load(str(path)), keep_io_types=True)
    onnx.save(model, str(path))


class _Feeds:
    """ONNX Runtime's calibration reader over ``{input name: array}`` feeds."""

    def __init__(self, feeds: Iterable[dict]) -> None:
        self.feeds = iter(list(feeds))

    def get_next(self) -> Optional[dict]:
        return next(self.feeds, None)


def to_int8(path: Path, feeds: Iterable[dict]) -> None:
    """Rewrite ``path`` statically quantised to int8 (QDQ), calibrated on ``feeds``."""
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_static

    tmp = path.with_name(path.stem + ".int8" + path.suffix)
    logging.disable(logging.WARNING)  # its advice to pre-process, one line per conv bias
    try:
        quantize_static(
            str(path),
            str(tmp),
            _Feeds(feeds),
            quant_format=QuantFormat.QDQ,
            activation_type=QuantType.QUInt8,
            weight_type=QuantType.QInt8,
        )
        os.replace(tmp, path)
    finally:
        logging.disable(logging.NOTSET)
        tmp.unlink(missing_ok=True)


def convert(path: str | os.PathLike, precision: str, feeds: Iterable[dict] = ()) -> None:
    """Convert the ONNX file ``path`` in place to ``precision`` (module docstring)."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}, got {precision!r}")
    if precision == "fp16":
        to_fp16(Path(path))
    elif precision == "int8":
        to_int8(Path(path), feeds)
