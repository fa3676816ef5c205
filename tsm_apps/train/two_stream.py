"""``tsm test --fuse`` (RGB + Flow two-stream) and ``tsm test --online`` (early recognition).

Fusion (TSN/TSM two-stream): each stream scores every validation video with one centre-crop
clip (the validation protocol of training); the fused score is the weighted mean of the two
softmax scores, ``(w_rgb * p_rgb + w_flow * p_flow) / (w_rgb + w_flow)``. Reported for 1:1 and
TSN's 1:1.5 (RGB:Flow) unless ``--fuse-weights`` names others.

Early recognition: :mod:`tsm_apps.train.online_eval`; its files (``early.csv``: fraction, one
column per method; ``early.json`` with whole-video online vs offline; ``early.html``, Plotly) are
written and read by :mod:`tsm_apps.train.early_files`.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Sequence

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from ..io import atomic_write_text
from .early_files import write_early as write_online  # noqa: F401  (tsm test --online --out)

PAPER_WEIGHTS = (1.0, 1.5)  # TSN: RGB 1, Flow 1.5


def fuse(rgb: Tensor, flow: Tensor, weights: Sequence[float] = (1.0, 1.0)) -> Tensor:
    """Weighted mean of two ``(N, K)`` score tensors (softmax probabilities)."""
    if rgb.shape != flow.shape:
        raise ValueError(f"RGB scores {tuple(rgb.shape)} and flow scores {tuple(flow.shape)} "
                         "differ: the two lists must hold the same videos in the same order")
    w_rgb, w_flow = weights
    return (w_rgb * rgb + w_flow * flow) / (w_rgb + w_flow)


@torch.no_grad()
def clip_scores(model: nn.Module, dataset, batch: int = 16) -> tuple:
    """``(softmax (N, K), labels (N,))`` of every clip of ``dataset`` (eval mode)."""
    model.eval()
    device = next(model.parameters()).device
    probs, labels = [], []
    for i in range(0, len(dataset), batch):
        items = [dataset[j] for j in range(i, min(i + batch, len(dataset)))]
        x = torch.stack([c for c, _ in items]).to(device)
        probs.append(F.softmax(model(x).float(), dim=1).cpu())
        labels += [lab for _, lab in items]
    return torch.cat(probs), torch.tensor(labels)


def top1(scores: Tensor, labels: Tensor) -> float:
    return 100.0 * float((scores.argmax(1) == labels).float().mean())


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The two-stream and early-recognition options of ``tsm test``."""
    g = p.add_argument_group("two-stream (--fuse) and early recognition (--online)")
    g.add_argument("--fuse", metavar="FLOW.pth", help="fuse with this Flow checkpoint's scores")
    g.add_argument("--flow-data", help="--fuse: the tsm flow extract folder (val.txt)")
    g.add_argument("--fuse-weights", default="", metavar="W_RGB,W_FLOW",
                   help="--fuse: extra RGB,Flow weights (1,1 and 1,1.5 are always reported)")
    g.add_argument("--online", action="store_true",
                   help="CHECKPOINT is an online TSM: accuracy vs fraction of video seen")
    g.add_argument("--offline-checkpoint", help="--online: the offline TSM to compare")
    g.add_argument("--tsn-checkpoint", help="--online: the TSN to compare")
    g.add_argument("--stride", type=int, default=2,
                   help="--online: frames between streamed frames (the training spacing)")


def _model(path: str, device: torch.device) -> tuple:
    from ..checkpoint.reading import load_checkpoint, read_checkpoint
    if not Path(path).is_file():
        raise FileNotFoundError(f"checkpoint not found: {path}")
    meta = read_checkpoint(path).get("meta") or {}
    return load_checkpoint(path).to(device), (meta.get("train_config") or {})


def _val_list(data: str) -> Path:
    p = Path(data)
    p = p / "val.txt" if p.is_dir() else p
    if not p.is_file():
        raise FileNotFoundError(f"list not found: {p}")
    return p


def run_fuse(args: argparse.Namespace, device: torch.device) -> dict:
    from .clips import ClipSet, read_list
    from .flow_clips import FlowClipSet
    if not args.flow_data:
        raise ValueError("--fuse needs --flow-data (the tsm flow extract folder)")
    rgb_list, flow_list = _val_list(args.data), _val_list(args.flow_data)
    weights = [(1.0, 1.0), PAPER_WEIGHTS]
    if args.fuse_weights:
        try:
            weights.append(tuple(float(v) for v in args.fuse_weights.split(",")))
        except ValueError:
            raise ValueError(f"--fuse-weights: expected W_RGB,W_FLOW, got {args.fuse_weights!r}")
    rgb, rcfg = _model(args.checkpoint, device)
    flow, fcfg = _model(args.fuse, device)
    rgb_set = ClipSet(read_list(rgb_list), False, rgb.num_segments,
                      args.size or rcfg.get("size", 224))
    flow_set = FlowClipSet(read_list(flow_list), False, flow.num_segments,
                           args.size or fcfg.get("size", 224), fcfg.get("new_length", 5))
    if rgb_set.labels != flow_set.labels:
        raise ValueError(f"{rgb_list} and {flow_list} differ in videos/labels")
    p_rgb, labels = clip_scores(rgb, rgb_set)
    p_flow, _ = clip_scores(flow, flow_set)
    res = {"videos": len(labels), "rgb_top1": top1(p_rgb, labels),
           "flow_top1": top1(p_flow, labels),
           "fused": [{"weights": list(w), "top1": top1(fuse(p_rgb, p_flow, w), labels)}
                     for w in weights]}
    print(f"tsm test --fuse: {res['videos']} videos: RGB {res['rgb_top1']:.2f}%  "
          f"Flow {res['flow_top1']:.2f}%  " + "  ".join(
              f"fused {w['weights'][0]:g}:{w['weights'][1]:g} {w['top1']:.2f}%"
              for w in res["fused"]))
    return res


def run_online(args: argparse.Namespace, device: torch.device) -> dict:
    from .clips import ClipSet, read_list, to_input
    from .online_eval import early_recognition
    models, size = {}, args.size
    for key, path in (("tsm_online", args.checkpoint), ("tsm_offline", args.offline_checkpoint),
                      ("tsn", args.tsn_checkpoint)):
        if path:
            models[key], cfg = _model(path, device)
            size = size or cfg.get("size", 224)
    t = models.get("tsm_offline", models["tsm_online"]).num_segments
    records = read_list(_val_list(args.data))
    videos = []
    for r in records:
        frames = ClipSet._decode(r, range(r.num_frames))
        videos.append((to_input(frames, size, None, False).to(device), r.label))
    res = early_recognition(models, videos, t=t, stride=args.stride,
                            progress=not args.no_progress)
    res["whole_video"] = {k: v[-1] for k, v in res["top1"].items()}
    print("tsm test --online: top-1 (%) vs fraction of the video seen")
    print("fraction " + " ".join(f"{k:>12s}" for k in res["top1"]))
    for i, p in enumerate(res["fractions"]):
        print(f"{p:8.1f} " + " ".join(f"{v[i]:12.1f}" for v in res["top1"].values()))
    return res


def main_streams(args: argparse.Namespace) -> int:
    """``tsm test`` with ``--fuse`` or ``--online``; 0 on success."""
    from .distributed import env_from, pick_device
    device = pick_device(args.device, env_from({}))
    if args.online:
        res = run_online(args, device)
        if args.out:
            write_online(res, args.out)
    else:
        res = run_fuse(args, device)
        if args.out:
            atomic_write_text(args.out, json.dumps(res, indent=1))
    return 0
