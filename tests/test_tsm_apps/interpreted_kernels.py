"""Runs the Triton shift kernels on CPU tensors under Triton's interpreter and saves inputs and
outputs for ``test_shift_kernel.py`` to compare with the official shift.

Run as ``TRITON_INTERPRET=1 python interpreted_kernels.py OUT.pt`` (the variable must be set
before Triton is imported, hence a separate process). Inputs are seeded; every dtype and memory
format the kernels support; frames larger than one kernel block; fold_div 8 and 4.
The residual epilogue fused with the shift runs on the same shapes (its op and backward) and
in a small ResNet whose stages fuse it (``cuda_shift_path("fused")``).
"""

from __future__ import annotations

import os
import sys

import torch

FORMATS = {"nchw": torch.contiguous_format, "channels_last": torch.channels_last}
DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
# (N*T, C, H, W), T, fold_div: a small clip; frames over one block (1024) in several clips;
# one frame; two 8-frame clips whose moved channels span several in-place tiles (5 of 128)
SHAPES = (
    ((6, 16, 5, 7), 3, 8),
    ((4, 24, 9, 11), 2, 4),
    ((3, 8, 2, 2), 1, 8),
    ((16, 64, 6, 6), 8, 8),
)
# (arch, shift) of the small models whose stages fuse the epilogue with the shift
FUSED_MODELS = (("resnet18", "offline"), ("resnet18", "online"), ("resnet50", "offline"))


def shift_cases() -> dict:
    from tsm_apps.models.shift import kernel as shift_kernel

    out = {}
    for fname, fmt in FORMATS.items():
        for dname, dtype in DTYPES.items():
            for online in (False, True):
                for i, (shape, t, fold_div) in enumerate(SHAPES):
                    g = torch.Generator().manual_seed(i)
                    x = torch.randn(shape, generator=g).to(dtype).contiguous(memory_format=fmt)
                    grad = torch.randn(shape, generator=g).to(dtype).contiguous(memory_format=fmt)
                    xg = x.clone().requires_grad_()
                    dirs = (-1,) if online else (1, -1)
                    y = shift_kernel.shift(xg, t, shape[1] // fold_div, dirs)
                    y.backward(grad)
                    out[(fname, dname, online, i)] = {
                        "x": x,
                        "grad": grad,
                        "t": t,
                        "fold_div": fold_div,
                        "y": y.detach(),
                        "x_grad": xg.grad,
                    }
    return out


def in_place_cases() -> dict:
    """The in-place pair: the tensor inside (shifted) and after the undo (restored)."""
    from tsm_apps.models.shift import kernel as shift_kernel

    out = {}
    for fname, fmt in FORMATS.items():
        for dname, dtype in DTYPES.items():
            for online in (False, True):
                for i, (shape, t, fold_div) in enumerate(SHAPES):
                    g = torch.Generator().manual_seed(20 + i)
                    x = torch.randn(shape, generator=g).to(dtype).contiguous(memory_format=fmt)
                    y, dirs = x.clone(), ((-1,) if online else (1, -1))
                    edge = shift_kernel.shift_in_place(y, t, shape[1] // fold_div, dirs)
                    inside = y.clone()
                    shift_kernel.undo_shift_in_place(y, edge, t, shape[1] // fold_div, dirs)
                    out[(fname, dname, online, i)] = {
                        "x": x,
                        "t": t,
                        "fold_div": fold_div,
                        "inside": inside,
                        "after": y,
                    }
    return out


def step_cases() -> dict:
    """Three streaming steps of two streams (fold 2, and frames over one block)."""
    from tsm_apps.models.shift import kernel as shift_kernel

    out = {}
    for fname, fmt in FORMATS.items():
        for dname, dtype in DTYPES.items():
            for i, (shape, fold_div) in enumerate((((2, 16, 5, 7), 8), ((2, 24, 9, 11), 4))):
                g = torch.Generator().manual_seed(10 + i)
                frames = [
                    torch.randn(shape, generator=g).to(dtype).contiguous(memory_format=fmt)
                    for _ in range(3)
                ]
                fold = shape[1] // fold_div
                buffer = torch.zeros(shape[0], fold, *shape[2:], dtype=dtype).contiguous(
                    memory_format=fmt
                )
                ptr, outs, buffers = buffer.data_ptr(), [], []
                for f in frames:
                    outs.append(shift_kernel.online_step(f, buffer, fold))
                    buffers.append(buffer.clone())
                out[(fname, dname, i)] = {
                    "frames": frames,
                    "fold_div": fold_div,
                    "outs": outs,
                    "buffers": buffers,
                    "same_storage": buffer.data_ptr() == ptr,
                }
    return out


def model_cases() -> dict:
    """A small ResNet-18 TSM with ``TemporalShift`` sending CPU tensors to the kernel (as it
    does CUDA tensors): inference logits, input and weight gradients, and (online) a stream of
    static-buffer steps across ``reset()``."""
    from tsm_apps.models.online import OnlineRecognizer
    from tsm_apps.models.recognizer import build_recognizer
    from tsm_apps.models.shift import kernel as shift_kernel
    from tsm_apps.models.shift import op as shift_mod

    shift_mod.kernel_module = lambda x: None if shift_mod._tracing() else shift_kernel
    # one thread, as the test's side: a convolution's weight gradient sums in an order that
    # depends on the thread count, and the comparison is bit for bit
    torch.set_num_threads(1)
    out = {}
    for shift in ("offline", "online"):
        torch.manual_seed(0)
        m = build_recognizer("resnet18", 5, 4, shift, width=0.125).eval()
        x = torch.randn(2, 4, 3, 32, 32, generator=torch.Generator().manual_seed(5))
        with torch.no_grad():
            logits = m(x)
        xg = x.clone().requires_grad_()
        m(xg).square().sum().backward()
        case = {
            "state": m.state_dict(),
            "x": x,
            "logits": logits,
            "x_grad": xg.grad,
            "w_grad": m.backbone.layer1[0].conv1.net.weight.grad,
        }
        if shift == "online":
            with OnlineRecognizer(m, mode="static") as rec:
                case["steps"] = [rec.step(x[:, t]) for t in range(3)]
                rec.reset()
                case["steps"].append(rec.step(x[:, 3]))
        out[shift] = case
    return out


def special(x: torch.Tensor) -> torch.Tensor:
    """``x`` with NaN, infinities, ``-0.0`` and the largest finite value in its first elements
    (so sums overflow, cancel to ``-0.0`` and carry NaN)."""
    flat = x.view(-1) if x.is_contiguous() else x.permute(0, 2, 3, 1).reshape(-1)
    big = torch.finfo(x.dtype).max
    vals = [float("nan"), float("inf"), -float("inf"), -0.0, big, -big, 1.0]
    flat[: len(vals)] = torch.tensor(vals, dtype=x.dtype)
    return flat.view(x.shape) if x.is_contiguous() else x


def residual_cases() -> dict:
    """The fused epilogue ``(relu(a + b), shift(relu(a + b)))`` and its gradients on the first
    three shapes (one with ``T = 1``), given both outputs' gradients (``"both"``); on the
    first shape also only ``y``'s, only ``z``'s, and ``fold = 0`` (``z`` is ``y``)."""
    from tsm_apps.models.shift import kernel as shift_kernel

    out = {}
    variants = [(i, "both", None) for i in range(3)] + [(0, "y", None), (0, "z", None)]
    for fname, fmt in FORMATS.items():
        for dname, dtype in DTYPES.items():
            for online in (False, True):
                for i, grads, fold in variants + [(0, "both", 0)]:
                    shape, t, fold_div = SHAPES[i]
                    fold = shape[1] // fold_div if fold is None else fold
                    g = torch.Generator().manual_seed(40 + i)
                    ab = [torch.randn(shape, generator=g).to(dtype) for _ in range(4)]
                    a, b, gy, gz = (v.contiguous(memory_format=fmt) for v in ab)
                    a, b = special(a), special(b)
                    ag, bg = a.clone().requires_grad_(), b.clone().requires_grad_()
                    dirs = (-1,) if online else (1, -1)
                    y, z = shift_kernel.residual_shift(ag, bg, t, fold, dirs)
                    outs = {"both": [y, z], "y": [y], "z": [z]}[grads]
                    torch.autograd.backward(outs, {"both": [gy, gz], "y": [gy], "z": [gz]}[grads])
                    out[(fname, dname, online, i, grads, fold)] = {
                        "a": a,
                        "b": b,
                        "gy": gy,
                        "gz": gz,
                        "t": t,
                        "y": y.detach(),
                        "z": z.detach(),
                        "a_grad": ag.grad,
                        "b_grad": bg.grad,
                    }
    return out


def fused_model_cases() -> dict:
    """Small ResNet TSMs (:data:`FUSED_MODELS`) whose stages fuse the epilogue with the next
    block's shift, with CPU tensors sent to the kernels as CUDA ones: eval logits, input and
    weight gradients, how many fused launches ran; ResNet-18 offline also with a hooked block,
    ResNet-18 online also static-buffer stream steps under the fused path."""
    from tsm_apps.models.online import OnlineRecognizer
    from tsm_apps.models.recognizer import build_recognizer
    from tsm_apps.models.shift import cuda_shift_path
    from tsm_apps.models.shift import kernel as shift_kernel
    from tsm_apps.models.shift import op as shift_mod
    from tsm_apps.models.shift.residual import fuse_residual_shifts

    shift_mod.kernel_module = lambda x: None if shift_mod._tracing() else shift_kernel
    launches = []
    fused = shift_kernel.residual_shift

    def counted(*args):
        launches.append(args[0].shape)
        return fused(*args)

    shift_kernel.residual_shift = counted
    torch.set_num_threads(1)
    out = {}
    for arch, shift in FUSED_MODELS:
        torch.manual_seed(0)
        m = fuse_residual_shifts(build_recognizer(arch, 5, 4, shift, width=0.125).eval())
        x = torch.randn(2, 4, 3, 32, 32, generator=torch.Generator().manual_seed(6))
        launches.clear()
        with cuda_shift_path("fused"):
            with torch.no_grad():
                logits = m(x)
            xg = x.clone().requires_grad_()
            m(xg).square().sum().backward()
        case = out[(arch, shift)] = {
            "state": m.state_dict(),
            "x": x,
            "logits": logits,
            "x_grad": xg.grad,
            "w_grads": {k: p.grad for k, p in m.named_parameters()},
            "launches": len(launches),
            "stage_type": type(m.backbone.layer1).__name__,
        }
        launches.clear()
        if (arch, shift) == ("resnet18", "offline"):  # a hooked block runs its own forward
            seen = []
            h = m.backbone.layer2[0].register_forward_hook(lambda *args: seen.append(1))
            with cuda_shift_path("fused"), torch.no_grad():
                case["hooked"] = m(x)
            h.remove()
            case["hooked_launches"] = (len(launches), len(seen))
        if (arch, shift) == ("resnet18", "online"):  # a stream steps unfused
            with cuda_shift_path("fused"), OnlineRecognizer(m, mode="static") as rec:
                case["steps"] = [rec.step(x[:, t]) for t in range(3)]
            case["step_launches"] = len(launches)
    return out


def refusal() -> str:
    """The error for a buffer in the other memory format than the frame."""
    from tsm_apps.models.shift import kernel as shift_kernel

    x = torch.zeros(1, 16, 4, 4).contiguous(memory_format=torch.channels_last)
    try:
        shift_kernel.online_step(x, torch.zeros(1, 2, 4, 4), 2)
    except ValueError as e:
        return str(e)
    return ""


if __name__ == "__main__":
    if os.environ.get("TRITON_INTERPRET") != "1":
        raise SystemExit("set TRITON_INTERPRET=1 (before Triton is imported)")
    torch.save(
        {
            "shift": shift_cases(),
            "in_place": in_place_cases(),
            "step": step_cases(),
            "refusal": refusal(),
            "model": model_cases(),
            "residual": residual_cases(),
            "fused_model": fused_model_cases(),
        },
        sys.argv[1],
    )
