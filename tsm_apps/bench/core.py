"""The core figures of ``tsm bench``: the shift's overhead, online latency and cache, TSM vs
I3D-replace, the shift op itself and data loading. Each takes ``(quick, device)`` and returns
:class:`~tsm_apps.bench.timing.Figure` objects measured side by side in one process."""
from __future__ import annotations

import time
from pathlib import Path

import torch

from ..models.inflate import inflate_shifts
from ..models.online import OnlineRecognizer
from ..models.recognizer import build_recognizer
from ..models.shift import temporal_shift
from .timing import Figure, time_one, time_pair


def _models(shift_a, shift_b, arch="resnet50", t=8, device="cpu"):
    torch.manual_seed(0)
    a = build_recognizer(arch, 400, t, shift_a).to(device).eval()
    b = build_recognizer(arch, 400, t, shift_b).to(device).eval()
    return a, b


@torch.no_grad()
def shift_overhead(quick: bool, device: str) -> list:
    """TSM / TSN latency, ResNet-50, 8 frames at 224x224, batch 1, offline shift."""
    tsm, tsn = _models("offline", None, device=device)
    x = torch.randn(1, 8, 3, 224, 224, device=device)
    ta, tb = time_pair(lambda: tsm(x), lambda: tsn(x), 3 if quick else 10, 1, device)
    r = ta / tb
    return [Figure("shift overhead: TSM/TSN latency (R50, 8x224, bs1)", r, "x", "<= 1.03",
                   r <= 1.03, device, {"tsm_ms": ta * 1e3, "tsn_ms": tb * 1e3})]


@torch.no_grad()
def online_latency(quick: bool, device: str) -> list:
    """Per-frame latency of online TSM vs TSN (ResNet-50, 224x224) and the shift cache size."""
    torch.manual_seed(0)
    tsm = build_recognizer("resnet50", 400, 8, "online").to(device).eval()
    tsn = build_recognizer("resnet50", 400, 8, None).to(device).eval()
    frame = torch.randn(1, 3, 224, 224, device=device)
    with OnlineRecognizer(tsm) as online:
        ta, tb = time_pair(lambda: online.step(frame), lambda: tsn.fc(tsn.backbone(frame).mean((2, 3))),
                           5 if quick else 20, 2, device)
        cache = online.cache_bytes
    r = ta / tb
    return [Figure("online per-frame latency: TSM/TSN (R50, 224)", r, "x", "<= 1.02", r <= 1.02,
                   device, {"tsm_ms": ta * 1e3, "tsn_ms": tb * 1e3}),
            Figure("online shift cache (R50, 224, fp32)", cache / 2 ** 20, "MiB", "paper ~0.9 MB",
                   None, device, {"bytes": cache})]


@torch.no_grad()
def tsm_vs_i3d(quick: bool, device: str) -> list:
    """Throughput of TSM over its I3D-replace twin (each shifted 1x1 conv -> 3x1x1)."""
    tsm, i3d = _models("offline", "offline", device=device)
    inflate_shifts(i3d)
    size = 160 if quick else 224
    x = torch.randn(1, 8, 3, size, size, device=device)
    ta, tb = time_pair(lambda: tsm(x), lambda: i3d(x), 3 if quick else 10, 1, device)
    r = tb / ta
    return [Figure(f"TSM vs I3D-replace throughput (R50, 8x{size})", r, "x", ">= 1.5", r >= 1.5,
                   device, {"tsm_ms": ta * 1e3, "i3d_ms": tb * 1e3})]


def naive_shift(x: torch.Tensor, t: int, fold_div: int = 8) -> torch.Tensor:
    """The straightforward shift: zeros plus slice copies (the official implementation)."""
    nt, c, h, w = x.shape
    v = x.view(nt // t, t, c, h, w)
    fold = c // fold_div
    out = torch.zeros_like(v)
    out[:, :-1, :fold] = v[:, 1:, :fold]
    out[:, 1:, fold:2 * fold] = v[:, :-1, fold:2 * fold]
    out[:, :, 2 * fold:] = v[:, :, 2 * fold:]
    return out.view(nt, c, h, w)


def shift_op_speed(quick: bool, device: str) -> list:
    """Forward + backward of ours vs the naive shift on ResNet-50 layer1-sized activations."""
    x = torch.randn(8, 256, 56, 56, device=device, requires_grad=True)

    def run(fn):
        def f():
            fn(x, 8).sum().backward()
            x.grad = None
        return f
    ta, tb = time_pair(run(temporal_shift), run(naive_shift), 10 if quick else 50, 3, device)
    r = ta / tb
    return [Figure("shift op fwd+bwd: ours/naive (8x256x56x56)", r, "x", "<= 1.00", r <= 1.0,
                   device, {"ours_ms": ta * 1e3, "naive_ms": tb * 1e3})]


def data_loading(quick: bool, device: str) -> list:
    """Sparse 8-segment sampling from mp4 (clips/s) vs the training step's consumption."""
    import tempfile

    import numpy as np

    from ..data import read_video_frames, write_video
    from ..data.sampling import sample_train
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "clip.mp4"
        rng = np.random.default_rng(0)
        write_video(path, rng.integers(0, 255, (250 if quick else 500, 112, 112, 3), np.uint8), 25)
        n = 5 if quick else 20
        srng = np.random.default_rng(0)
        t0 = time.perf_counter()
        for _ in range(n):
            read_video_frames(path, sample_train(250 if quick else 500, 8, srng))
        load = n / (time.perf_counter() - t0)
    torch.manual_seed(0)
    model = build_recognizer("resnet18", 8, 8, "offline", width=0.25, dropout=0.0).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(8, 8, 3, 96, 96, device=device)
    y = torch.zeros(8, dtype=torch.long, device=device)

    def step():
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    consume = 8 / time_one(step, 3 if quick else 10, 1, device)
    r = load / consume
    return [Figure("data: sparse mp4 loading / train-step consumption (1 worker)", r, "x",
                   ">= 1 (loader keeps up)", r >= 1.0, device,
                   {"load_clips_per_s": load, "train_clips_per_s": consume})]


FIGURES = (shift_overhead, online_latency, tsm_vs_i3d, shift_op_speed, data_loading)


def figures(quick: bool, device: str) -> list:
    """Every core figure on ``device`` (the ``core`` entry of the ``tsm.bench`` group)."""
    out = []
    for fn in FIGURES:
        print(f"[bench] {fn.__name__} on {device}", flush=True)
        out += fn(quick, device)
    return out
