"""The official online demo's model (mit-han-lab ``online_demo/mobilenet_v2_tsm.py``) against
our online MobileNetV2 step, like for like: ``tsm bench --official-online-demo PATH``.

The official file is imported from the user's checkout by path (never copied here). Its
``MobileNetV2(n_class=27)`` steps as the demo steps it: ``forward(frame, *shift_buffer) ->
(logits, *new_buffers)``, the new buffers fed back with the next frame. Ours is the same step
(:class:`~tsm_apps.models.online.OnlineStep` of ``build_recognizer("mobilenetv2", 27,
shift="online")``), in the demo's layout (NCHW), fp32, batch 1. Both sides run by the same
route: ``eager``; ``graph`` (the step captured once into a CUDA graph and replayed, the buffers
copied in; CUDA only); ``onnxruntime:<provider>`` (both exported by the TorchScript exporter
with ``tsm export``'s settings and run in an ONNX Runtime session, :mod:`tsm_apps.engine`). The
demo itself deploys compiled (ONNX -> TVM); the graph and ONNX Runtime routes stand for that.
"""

from __future__ import annotations

import importlib.util
import tempfile
import warnings
from pathlib import Path
from typing import Callable

import numpy as np
import torch
from torch import nn

from ..checkpoint.export import DEFAULT_OPSET
from ..engine.runtime import session
from ..models.cuda_graph import CapturedCall
from ..models.online import OnlineStep
from ..models.recognizer import build_recognizer
from ..models.trunk import set_memory_format
from .anchors import GOAL, Side, pair_figure
from .official_shift import NCHW
from .timing import load_average, medians, paired_ratio, time_rounds

CLASSES = 27  # the demo's Jester head


def load_demo(path: str | Path):
    """The official ``mobilenet_v2_tsm`` module read from ``path``; ValueError naming the file
    when it is missing, does not import or lacks the demo's classes."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(
            f"{path}: no such file (expected the official online_demo/mobilenet_v2_tsm.py)"
        )
    spec = importlib.util.spec_from_file_location("official_mobilenet_v2_tsm", path)
    mod = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(mod)
    except Exception as e:  # the user's file: any failure to import it is theirs to fix
        raise ValueError(f"{path}: cannot be imported ({type(e).__name__}: {e})") from None
    for name in ("MobileNetV2", "InvertedResidualWithShift"):
        if not hasattr(mod, name):
            raise ValueError(f"{path}: defines no {name} (not the official online demo)")
    return mod


@torch.no_grad()
def demo_buffers(mod, model: nn.Module, frame: torch.Tensor) -> list:
    """Zero buffers ``(N, C_i // 8, h_i, w_i)`` for ``model`` (official ``MobileNetV2``), found
    by running its ``features`` the way its ``forward`` does."""
    x, out = frame, []
    for f in model.features:
        if isinstance(f, mod.InvertedResidualWithShift):
            b = x.new_zeros(x.shape[0], x.shape[1] // 8, *x.shape[2:])
            out.append(b)
            x = f(x, b)[0]
        else:
            x = f(x)
    return out


def export_step(step: nn.Module, args: tuple, path: Path) -> Path:
    """``step(frame, *buffers) -> (logits, *new_buffers)`` to ONNX at ``path`` as ``tsm export
    --online`` writes ours (TorchScript exporter, opset, constant folding, dynamic batch)."""
    inputs = ["frame"] + [f"buffer_{i}" for i in range(len(args) - 1)]
    outputs = ["logits"] + [f"new_buffer_{i}" for i in range(len(args) - 1)]
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")  # TracerWarnings, the exporter's deprecation notice
        torch.onnx.export(
            step,
            args,
            str(path),
            dynamo=False,
            do_constant_folding=True,
            input_names=inputs,
            output_names=outputs,
            dynamic_axes={n: {0: "batch"} for n in inputs + outputs},
            opset_version=DEFAULT_OPSET,
        )
    return path


def ort_provider(device: str) -> str:
    """ONNX Runtime's provider for ``device``: CUDA's where the device and the build have it."""
    import onnxruntime as ort

    cuda = torch.device(device).type == "cuda"
    if cuda and "CUDAExecutionProvider" in ort.get_available_providers():
        return "CUDAExecutionProvider"
    return "CPUExecutionProvider"


def stepper(step: nn.Module, frame: torch.Tensor, buffers: list, route: str, folder: Path):
    """One call = one step of ``step`` by ``route``, the new buffers fed back (``buffers`` is
    updated in place: the stream's state after the call)."""
    kind, _, provider = route.partition(":")
    if kind == "eager":

        def eager():
            out = step(frame, *buffers)
            buffers[:] = out[1:]
            return out[0]

        return eager
    if kind == "graph":
        if torch.device(frame.device).type != "cuda":
            raise ValueError(f"route 'graph' needs a CUDA device, got {frame.device}")
        call = CapturedCall(step, [frame, *buffers])

        def graph():
            out = call(frame, *buffers)
            buffers[:] = out[1:]
            return out[0]

        return graph
    if kind == "onnxruntime":
        path = export_step(step, (frame, *buffers), folder / f"{id(step)}.onnx")
        sess = session(path, [provider])
        feeds = {"frame": frame.cpu().numpy()}
        names = [f"buffer_{i}" for i in range(len(buffers))]
        state = [b.cpu().numpy() for b in buffers]

        def onnx():
            out = sess.run(None, {**feeds, **dict(zip(names, state))})
            state[:] = out[1:]
            buffers[:] = [torch.from_numpy(np.asarray(b)) for b in out[1:]]
            return out[0]

        return onnx
    raise ValueError(f"unknown route {route!r}: eager, graph or onnxruntime:<provider>")


def demo_routes(device: str) -> tuple:
    """The routes run on ``device``: eager and ONNX Runtime, and on CUDA a CUDA graph."""
    graph = ("graph",) if torch.device(device).type == "cuda" else ()
    return ("eager",) + graph + (f"onnxruntime:{ort_provider(device)}",)


def models(path: str | Path, device: str, size: int) -> tuple:
    """``(ours, theirs, frame, our_buffers, their_buffers)``: the two step modules (fp32, NCHW,
    eval) on ``device``, one ``(1, 3, size, size)`` frame and zero buffers for each."""
    mod = load_demo(path)
    torch.manual_seed(0)
    theirs = mod.MobileNetV2(n_class=CLASSES).to(device).eval()
    model = build_recognizer("mobilenetv2", CLASSES, 8, "online")
    set_memory_format(model.backbone, NCHW)
    ours = OnlineStep(model.to(device).eval()).eval()
    frame = torch.randn(1, 3, size, size, device=device)
    mine = [torch.zeros(s, device=device) for s in ours.buffer_shapes(tuple(frame.shape))]
    return ours, theirs, frame, mine, demo_buffers(mod, theirs, frame)


@torch.no_grad()
def demo_anchors(
    path: str | Path, device: str, rounds: int, size: int = 224, routes: tuple | None = None
) -> list:
    """Per route, our online MobileNetV2 step / the official demo's step (per frame, batch 1,
    fp32, NCHW), both by that route, timed round-robin."""
    ours, theirs, frame, mine, their_bufs = models(path, device, size)
    steps = {"ours": (ours, mine), "official": (theirs, their_bufs)}
    names = {"ours": "ours online MobileNetV2 step", "official": "official online demo step"}
    title = f"official online demo anchor (mobilenetv2, {size}, per frame)"
    out = []
    with tempfile.TemporaryDirectory() as folder:
        for route in routes or demo_routes(device):
            runs = {k: route for k in steps}  # each side's route, named in its label below
            fns: dict[str, Callable] = {
                k: stepper(m, frame, [b.clone() for b in bufs], runs[k], Path(folder))
                for k, (m, bufs) in steps.items()
            }
            load = load_average()
            t = time_rounds(fns, rounds, 5, device)
            detail = {f"{k}_ms": round(v * 1e3, 3) for k, v in medians(t).items()}
            detail.update(load=[load, load_average()], buffers=[list(b.shape) for b in their_bufs])
            sides = [Side(names[k], runs[k], "NCHW", "fp32", frame.shape[0]) for k in steps]
            value = paired_ratio(t, "ours", "official")
            out.append(pair_figure(title, *sides, value, GOAL, device, detail))
    return out
