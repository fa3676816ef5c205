"""Checks on a CUDA machine that the GPU path computes what the CPU tests hold, before its
figures are read (``tsm bench --device cuda core``).

    .venv/bin/python benchmarks/check_cuda.py

* The Triton shift (compiled, not interpreted) equals the official shift (``zeros_like`` +
  slice copies, written here) forward and backward, bit for bit, for NCHW and channels-last,
  fp32/bf16/fp16, offline and online, at ResNet-50's activation sizes; so does the in-place
  pair (inference), which then restores its input bit for bit; R-50 inference agrees across
  the in-place kernel, the out-of-place kernel and no kernel.
* The residual epilogue fused with the shift (one launch: ``relu(a + b)`` and its shift, and
  its one-launch backward) equals ``torch.relu(a + b)`` and the official shift, forward and
  backward, bit for bit, at the same sizes; a ResNet-50 whose stages fuse it
  (``cuda_shift_path("fused")``) equals the default model: logits, and with cuDNN's
  deterministic algorithms every gradient, bit for bit.
* ``tsm test``/``predict``'s forward (``view_logits``) replayed from CUDA graphs equals eager.
* The online step replayed from a CUDA graph equals the same static-buffer step run eagerly
  (bit for bit) and the eager step (to float tolerance: other kernels), frame by frame across
  ``reset()``, for two stream sizes, ResNet-50 and MobileNetV2.
* The like-for-like anchors (``tsm_apps.bench.anchors``): the official-op model runs wholly in
  its spec's layout on CUDA (every op's input and output), and each route (a CUDA graph,
  ``torch.compile`` with Inductor) gives eager's logits for ours and the official-op model; the
  online demo's harness stepping our MobileNetV2 from a CUDA graph, buffers fed back, gives the
  eager steps' logits frame by frame.

Every check runs and prints ``ok`` or ``FAIL``; the exit code is 1 if any failed.
"""

from __future__ import annotations

import sys
from contextlib import nullcontext

import torch

from tsm_apps.bench.official_shift import naive_shift
from tsm_apps.models.online import OnlineRecognizer
from tsm_apps.models.recognizer import build_recognizer
from tsm_apps.models.shift import op as shift_mod
from tsm_apps.models.trunk import set_memory_format

FORMATS = {"nchw": torch.contiguous_format, "channels_last": torch.channels_last}
DTYPES = (torch.float32, torch.bfloat16, torch.float16)
# (N*T, C, H, W): R-50 blockres inputs of layer1..layer4 for one 8-frame clip, and an odd one
SHAPES = (
    (8, 64, 56, 56),
    (8, 256, 56, 56),
    (8, 512, 28, 28),
    (8, 1024, 14, 14),
    (8, 2048, 7, 7),
    (6, 24, 9, 11),
)


FAILED: list = []


def check(ok: bool, what: str) -> None:
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        FAILED.append(what)


def check_kernel() -> None:
    g = torch.Generator(device="cuda").manual_seed(0)
    for shape in SHAPES:
        t = 8 if shape[0] == 8 else 3
        for fname, fmt in FORMATS.items():
            for dtype in DTYPES:
                for online in (False, True):
                    x = torch.randn(shape, device="cuda", generator=g).to(dtype)
                    x = x.contiguous(memory_format=fmt).requires_grad_()
                    check(shift_mod.kernel_module(x) is not None, "the kernel is used on CUDA")
                    y = shift_mod.temporal_shift(x, t, online=online)
                    grad = torch.randn_like(y)
                    y.backward(grad)
                    xr = x.detach().clone().requires_grad_()
                    yr = naive_shift(xr, t, online=online)
                    yr.backward(grad)
                    check(
                        torch.equal(y, yr)
                        and torch.equal(x.grad, xr.grad)
                        and y.is_contiguous(memory_format=fmt),
                        f"kernel shift {shape} {fname} {dtype} online={online}",
                    )


def check_in_place() -> None:
    """The in-place kernel pair: inside, the official shift; after, the input bit for bit."""
    from tsm_apps.models.shift import kernel as shift_kernel

    for shape in SHAPES:
        t = 8 if shape[0] == 8 else 3
        for fname, fmt in FORMATS.items():
            for dtype in DTYPES:
                for online in (False, True):
                    x0 = torch.randn(shape, device="cuda").to(dtype).contiguous(memory_format=fmt)
                    x, dirs = x0.clone(), ((-1,) if online else (1, -1))
                    edge = shift_kernel.shift_in_place(x, t, shape[1] // 8, dirs)
                    shifted = torch.equal(x, naive_shift(x0, t, online=online))
                    shift_kernel.undo_shift_in_place(x, edge, t, shape[1] // 8, dirs)
                    check(
                        shifted and torch.equal(x, x0),
                        f"in-place kernel {shape} {fname} {dtype} online={online}",
                    )


def check_residual() -> None:
    """The fused epilogue against ``torch.relu(a + b)`` and the official shift."""
    g = torch.Generator(device="cuda").manual_seed(1)
    for shape in SHAPES:
        t = 8 if shape[0] == 8 else 3
        for fname, fmt in FORMATS.items():
            for dtype in DTYPES:
                for online in (False, True):
                    a, b, gy, gz = (
                        torch.randn(shape, device="cuda", generator=g)
                        .to(dtype)
                        .contiguous(memory_format=fmt)
                        for _ in range(4)
                    )
                    ag, bg = a.clone().requires_grad_(), b.clone().requires_grad_()
                    y, z = shift_mod.residual_relu_shift(ag, bg, t, online=online)
                    torch.autograd.backward([y, z], [gy, gz])
                    ar, br = a.clone().requires_grad_(), b.clone().requires_grad_()
                    yr = torch.relu(ar + br)
                    zr = naive_shift(yr, t, online=online)
                    torch.autograd.backward([yr, zr], [gy, gz])
                    check(
                        torch.equal(y, yr)
                        and torch.equal(z, zr)
                        and torch.equal(ag.grad, ar.grad)
                        and torch.equal(bg.grad, br.grad)
                        and z.is_contiguous(memory_format=fmt),
                        f"fused epilogue {shape} {fname} {dtype} online={online}",
                    )


def check_fused_model() -> None:
    """R-50 with fused stages == the default model, bf16 autocast channels-last and fp32."""
    from tsm_apps.models.shift import fuse_residual_shifts

    deterministic = torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark
    torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark = True, False
    try:
        for dtype in (None, torch.bfloat16):
            torch.manual_seed(0)
            m = fuse_residual_shifts(build_recognizer("resnet50", 10, 8, "offline").cuda())
            x = torch.randn(2, 8, 3, 112, 112, device="cuda")
            logits, grads = [], []
            for train in (False, True):  # eval first: a training forward moves BN's stats
                for path in (None, "fused"):
                    m.train(train)
                    m.zero_grad(set_to_none=True)
                    with (
                        shift_mod.cuda_shift_path(path) if path else nullcontext(),
                        torch.autocast("cuda", dtype=dtype) if dtype else nullcontext(),
                        nullcontext() if train else torch.no_grad(),
                    ):
                        torch.manual_seed(1)  # the same dropout mask
                        out = m(x)
                        if train:
                            out.float().square().sum().backward()
                    if train:
                        grads.append([p.grad.clone() for p in m.parameters()])
                    else:
                        logits.append(out)
            (l0, l1), (g0, g1) = logits, grads
            check(
                torch.equal(l0, l1) and all(torch.equal(a, b) for a, b in zip(g0, g1)),
                f"R-50 fused stages == default path, {dtype or 'fp32'}: logits and every "
                f"gradient (max |diff| logits {(l0 - l1).abs().max():.2e})",
            )
    finally:
        torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark = deterministic


def check_module() -> None:
    torch.manual_seed(0)
    m = build_recognizer("resnet50", 10, 8, "offline").cuda()
    x = torch.randn(2, 8, 3, 112, 112, device="cuda")
    with torch.no_grad():
        m.eval()
        before = x.clone()
        with shift_mod.cuda_shift_path("kernel"):
            inference = m(x)
        check(
            torch.equal(x, before), "R-50 inference, in-place pair: the input is back, bit for bit"
        )
        for path in ("kernel_copy", "copy", None):
            with shift_mod.cuda_shift_path(path) if path else nullcontext():
                other = m(x)
            diff = (inference - other).abs().max().item()
            check(
                diff <= 1e-5,
                f"R-50 inference: in-place kernel ~ {path or 'default'} path "
                f"(max |diff| {diff:.2e}, equal: {torch.equal(inference, other)})",
            )
    m.train()
    m(x).sum().backward()
    check(
        all(p.grad is not None for p in m.parameters() if p.requires_grad),
        "R-50 training step through the kernel: every parameter has a gradient",
    )


@torch.no_grad()
def check_views() -> None:
    """``tsm test``/``predict``'s forward (:func:`view_logits`): replayed graphs == eager."""
    from tsm_apps.evaluation.scoring import view_logits

    torch.manual_seed(0)
    m = build_recognizer("resnet50", 10, 8, "offline").cuda().eval()
    views = torch.randn(30, 8, 3, 224, 224)
    eager = torch.cat([m(views[i : i + 8].cuda()).float().cpu() for i in range(0, 30, 8)])
    first, again = view_logits(m, views), view_logits(m, views)
    check(
        torch.equal(first, again) and torch.equal(first, eager),
        f"view_logits on CUDA graphs == eager (max |diff| {(first - eager).abs().max():.2e})",
    )


def stream(model, mode, clips, reset_at):
    out = []
    with OnlineRecognizer(model, mode=mode) as rec:
        for frames in clips:
            for t, f in enumerate(frames):
                if t == reset_at:
                    rec.reset()
                out.append(rec.step(f))
            rec.reset()
    return out


@torch.no_grad()
def check_online() -> None:
    for arch in ("resnet50", "mobilenetv2"):
        for fmt in FORMATS.values():
            torch.manual_seed(0)
            m = build_recognizer(arch, 10, 8, "online").cuda().eval()
            set_memory_format(m.backbone, fmt)
            for shape in ((1, 3, 224, 224), (2, 3, 160, 128)):
                clips = [torch.randn(6, *shape, device="cuda")]
                graph = stream(m, "graph", clips, reset_at=4)
                static = stream(m, "static", clips, reset_at=4)
                eager = stream(m, "eager", clips, reset_at=4)
                same = all(torch.equal(a, b) for a, b in zip(graph, static))
                diff = max((a - b).abs().max().item() for a, b in zip(graph, eager))
                check(same, f"{arch} {shape} graph == static step, frame by frame, across reset")
                check(diff <= 1e-3, f"{arch} {shape} graph ~ eager step (max |diff| {diff:.2e})")


@torch.no_grad()
def check_anchors() -> None:
    import tempfile
    from pathlib import Path

    from tsm_apps.bench.anchors import routed
    from tsm_apps.bench.official_demo import stepper
    from tsm_apps.bench.official_shift import OfficialShift
    from tsm_apps.bench.spec import Spec, build
    from tsm_apps.models.online import OnlineStep

    for spec in (
        Spec(arch="resnet18", batch=2, size=112, fmt=torch.contiguous_format),
        Spec(arch="resnet18", batch=2, size=112, dtype=torch.bfloat16),
    ):
        x = torch.randn(spec.batch, spec.segments, 3, spec.size, spec.size, device="cuda")
        for official in (False, True):
            m = build(spec, "offline", "cuda", official=official).eval()
            seen = []
            hooks = [
                mod.register_forward_hook(lambda mod, i, o: seen.extend([i[0], o]))
                for mod in m.modules()
                if isinstance(mod, OfficialShift)
            ]
            eager = routed(m, spec, "cuda", "eager", x)().float()
            for h in hooks:
                h.remove()
            if official:
                check(
                    len(seen) == 16 and all(t.is_contiguous(memory_format=spec.fmt) for t in seen),
                    f"official-op model wholly in {spec.fmt}, {spec.dtype or 'fp32'}",
                )
            tol = 1e-3 if spec.dtype is None else 5e-2
            for route in ("graph", "compiled:inductor"):
                got = routed(m, spec, "cuda", route, x)().float()
                diff = (got - eager).abs().max().item() / max(eager.abs().max().item(), 1e-12)
                check(
                    diff <= tol,
                    f"anchor route {route} ~ eager, official={official}, "
                    f"{spec.dtype or 'fp32'} (max relative |diff| {diff:.2e})",
                )
    torch.manual_seed(0)
    step = OnlineStep(build_recognizer("mobilenetv2", 27, 8, "online").cuda().eval()).eval()
    frame = torch.randn(1, 3, 224, 224, device="cuda")
    zeros = [torch.zeros(s, device="cuda") for s in step.buffer_shapes(tuple(frame.shape))]
    with tempfile.TemporaryDirectory() as folder:
        runs = {
            r: stepper(step, frame, [b.clone() for b in zeros], r, Path(folder))
            for r in ("eager", "graph")
        }
        diffs = []
        for _ in range(3):
            a, b = runs["eager"]().clone(), runs["graph"]().clone()
            diffs.append((a - b).abs().max().item() / max(a.abs().max().item(), 1e-12))
    check(max(diffs) <= 1e-3, f"online demo harness: graph step ~ eager, 3 frames {diffs}")


def main() -> int:
    if not torch.cuda.is_available():
        print("no CUDA device", file=sys.stderr)
        return 2
    import triton

    print(
        f"{torch.cuda.get_device_name(0)}, torch {torch.__version__}, triton {triton.__version__}",
        flush=True,
    )
    check_kernel()
    check_in_place()
    check_residual()
    check_fused_model()
    check_module()
    check_views()
    check_online()
    check_anchors()
    print(f"{len(FAILED)} CUDA checks failed: {FAILED}" if FAILED else "all CUDA checks passed")
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
