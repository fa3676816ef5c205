"""``tsm test --fuse`` (RGB + Flow two-stream) and ``tsm test --online`` (early recognition).

Fusion (TSN/TSM two-stream): each stream scores every validation video under its own test
protocol (:func:`~tsm_apps.evaluation.recognition.predict`); the fused score is the weighted
mean of the two softmax scores, ``(w_rgb * p_rgb + w_flow * p_flow) / (w_rgb + w_flow)``.
Reported for 1:1 and TSN's 1:1.5 (RGB:Flow) unless ``--fuse-weights`` names others.

Early recognition: :mod:`tsm_apps.evaluation.early`; its files (``early.csv``: fraction, one
column per method; ``early.json`` with whole-video online vs offline; ``early.html``, Plotly) are
written and read by :mod:`tsm_apps.evaluation.early_files`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

import torch
from torch import Tensor

from ..io import atomic_write_text
from ..progress import progress_bar
from .early_files import write_early as write_online  # noqa: F401  (tsm test --online --out)

PAPER_WEIGHTS = (1.0, 1.5)  # TSN: RGB 1, Flow 1.5


def fuse(rgb: Tensor, flow: Tensor, weights: Sequence[float] = (1.0, 1.0)) -> Tensor:
    """Weighted mean of two ``(N, K)`` score tensors (softmax probabilities)."""
    if rgb.shape != flow.shape:
        raise ValueError(
            f"RGB scores {tuple(rgb.shape)} and flow scores {tuple(flow.shape)} "
            "differ: the two lists must hold the same videos in the same order"
        )
    w_rgb, w_flow = weights
    return (w_rgb * rgb + w_flow * flow) / (w_rgb + w_flow)


def stream_scores(ck, records, progress: bool = False) -> tuple:
    """``(probabilities (N, K), labels (N,))`` of ``ck`` on ``records`` under its protocol."""
    from .recognition import predict

    probs = [
        predict(ck, r).probs.float()
        for r in progress_bar(records, desc=ck.path.name, unit="video", enabled=progress)
    ]
    return torch.stack(probs), torch.tensor([r.label for r in records])


def top1(scores: Tensor, labels: Tensor) -> float:
    return 100.0 * float((scores.argmax(1) == labels).float().mean())


def _val_list(data: str) -> Path:
    """The list file ``data`` names: itself, or the ``val.txt`` / ``test.txt`` of a folder."""
    from ..data.sources import resolve_list

    p = resolve_list(data)
    if not p.is_file():
        raise FileNotFoundError(f"list not found: {p / 'val.txt'}")
    return p


def _weights(text: str) -> list:
    weights = [(1.0, 1.0), PAPER_WEIGHTS]
    if text:
        try:
            weights.append(tuple(float(v) for v in text.split(",")))
        except ValueError:
            raise ValueError(f"--fuse-weights: expected W_RGB,W_FLOW, got {text!r}") from None
    return weights


def run_fuse(cfg, device: torch.device) -> dict:
    """``tsm test RGB.pth --fuse FLOW.pth --data DIR --flow-data FLOWDIR`` (module docstring)."""
    from ..data.lists import read_tsm_list
    from .recognition import open_checkpoint

    if not cfg.flow_data:
        raise ValueError("--fuse needs --flow-data (the tsm flow extract folder)")
    rgb_list, flow_list = _val_list(cfg.data), _val_list(cfg.flow_data)
    weights = _weights(cfg.fuse_weights)
    rgb = open_checkpoint(cfg.checkpoint, device=device)
    flow = open_checkpoint(cfg.fuse, device=device)
    if flow.modality != "flow":
        raise ValueError(f"--fuse {cfg.fuse}: not a flow checkpoint (3 input channels)")
    rgb_rec, flow_rec = read_tsm_list(rgb_list), read_tsm_list(flow_list)
    if [r.label for r in rgb_rec] != [r.label for r in flow_rec]:
        raise ValueError(f"{rgb_list} and {flow_list} differ in videos/labels")
    p_rgb, labels = stream_scores(rgb, rgb_rec, cfg.progress)
    p_flow, _ = stream_scores(flow, flow_rec, cfg.progress)
    res = {
        "videos": len(labels),
        "rgb_top1": top1(p_rgb, labels),
        "flow_top1": top1(p_flow, labels),
        "fused": [
            {"weights": list(w), "top1": top1(fuse(p_rgb, p_flow, w), labels)} for w in weights
        ],
    }
    print(
        f"tsm test --fuse: {res['videos']} videos: RGB {res['rgb_top1']:.2f}%  "
        f"Flow {res['flow_top1']:.2f}%  "
        + "  ".join(
            f"fused {w['weights'][0]:g}:{w['weights'][1]:g} {w['top1']:.2f}%" for w in res["fused"]
        )
    )
    return res


def every_frame(ck, record) -> Tensor:
    """Every frame of ``record`` as ``(F, 3, S, S)``: the protocol's centre view of each frame."""
    import numpy as np

    from ..data.pipeline import views_from_frames
    from ..data.video import read_video_frames

    proto = ck.protocol.with_options(clips=1, crops=1, sampling="tsn")
    idx = np.arange(int(record.num_frames))[None]
    views = views_from_frames(lambda i: read_video_frames(record.path, i), idx, proto)
    return views.input[0]


def run_online(cfg, device: torch.device) -> dict:
    """``tsm test ONLINE.pth --online [--offline-checkpoint] [--tsn-checkpoint]``."""
    from ..data.lists import read_tsm_list
    from .early import early_recognition
    from .recognition import open_checkpoint

    cks = {
        key: open_checkpoint(path, device=device)
        for key, path in (
            ("tsm_online", cfg.checkpoint),
            ("tsm_offline", cfg.offline_checkpoint),
            ("tsn", cfg.tsn_checkpoint),
        )
        if path
    }
    t = cks.get("tsm_offline", cks["tsm_online"]).num_segments
    base = cks["tsm_online"]
    videos = [
        (every_frame(base, r).to(device), r.label) for r in read_tsm_list(_val_list(cfg.data))
    ]
    res = early_recognition(
        {k: c.model for k, c in cks.items()}, videos, t=t, stride=cfg.stride, progress=cfg.progress
    )
    res["whole_video"] = {k: v[-1] for k, v in res["top1"].items()}
    print("tsm test --online: top-1 (%) vs fraction of the video seen")
    print("fraction " + " ".join(f"{k:>12s}" for k in res["top1"]))
    for i, p in enumerate(res["fractions"]):
        print(f"{p:8.1f} " + " ".join(f"{v[i]:12.1f}" for v in res["top1"].values()))
    return res


def main_streams(cfg) -> int:
    """``tsm test`` with ``--fuse`` or ``--online`` (``cfg``: its TestConfig); 0 on success."""
    from ..distributed import env_from, pick_device

    device = pick_device(cfg.device, env_from({}))
    if cfg.online:
        res = run_online(cfg, device)
        if cfg.out:
            write_online(res, cfg.out)
    else:
        res = run_fuse(cfg, device)
        if cfg.out:
            atomic_write_text(cfg.out, json.dumps(res, indent=1))
    return 0
