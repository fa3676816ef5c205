"""``tsm test``: multi-clip, multi-crop evaluation of a recognizer checkpoint.

Protocol (TSN/TSM, mmaction2 ``ThreeCrop``/``TenCrop``): each video gives ``clips`` clips of
``T`` frames (clip ``j`` takes, in every one of the ``T`` segments, the frame at offset
``(j + 0.5) / clips`` of the segment); frames are resized so the short side is ``scale_size``,
then cut into ``crops`` views of ``size x size``: 1 = centre, 3 = both ends and the centre of
the long side, 10 = four corners and centre, plus their mirror images. The video's score is
the mean softmax over its ``clips x crops`` views. Reported: top-1, top-5, mean class
accuracy, per-class accuracy and the confusion matrix (rows = true class).
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Optional, Sequence

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from ..io import atomic_write_text
from .clips import MEAN, STD, ClipRecord, read_list
from .metrics import confusion_matrix, per_class_accuracy, topk_correct

CROPS = (1, 3, 10)


def clip_indices(num_frames: int, t: int, clips: int) -> list:
    """Frame indices ``[clips][t]``: clip ``j`` at offset ``(j + 0.5) / clips`` in each segment."""
    seg = num_frames / t
    return [[min(int(seg * (i + (j + 0.5) / clips)), num_frames - 1) for i in range(t)]
            for j in range(clips)]


def crop_views(frames: Tensor, size: int, scale_size: int, crops: int) -> Tensor:
    """uint8 ``(T, H, W, 3)`` -> normalised float views ``(crops, T, 3, size, size)``."""
    if crops not in CROPS:
        raise ValueError(f"crops must be one of {CROPS}, got {crops}")
    x = frames.permute(0, 3, 1, 2).float().div_(255)
    h, w = x.shape[-2:]
    sh, sw = (scale_size, round(w * scale_size / h)) if h <= w else (round(h * scale_size / w),
                                                                     scale_size)
    x = F.interpolate(x, size=(sh, sw), mode="bilinear", align_corners=False, antialias=True)
    cy, cx = (sh - size) // 2, (sw - size) // 2
    if crops == 1:
        boxes = [(cy, cx)]
    elif crops == 3:
        boxes = ([(cy, 0), (cy, cx), (cy, sw - size)] if sw >= sh
                 else [(0, cx), (cy, cx), (sh - size, cx)])
    else:
        boxes = [(0, 0), (0, sw - size), (sh - size, 0), (sh - size, sw - size), (cy, cx)]
    if min(sh, sw) < size:
        raise ValueError(f"scale_size {scale_size} gives frames {sh}x{sw}, smaller than crop {size}")
    views = [x[:, :, y:y + size, x0:x0 + size] for y, x0 in boxes]
    if crops == 10:
        views += [v.flip(-1) for v in views]
    out = torch.stack(views)
    mean = out.new_tensor(MEAN).view(1, 1, 3, 1, 1)
    std = out.new_tensor(STD).view(1, 1, 3, 1, 1)
    return (out - mean) / std


@torch.no_grad()
def video_scores(model: nn.Module, frames: Tensor, num_frames_idx: list, size: int,
                 scale_size: int, crops: int, device: torch.device) -> Tensor:
    """Mean softmax ``(K,)`` over the views of one video; ``frames`` uint8 ``(F, H, W, 3)``."""
    views = torch.cat([crop_views(frames[idx], size, scale_size, crops) for idx in num_frames_idx])
    return F.softmax(model(views.to(device)).float(), dim=1).mean(0).cpu()


def evaluate(model: nn.Module, records: Sequence[ClipRecord], clips: int = 1, crops: int = 1,
             size: int = 224, scale_size: Optional[int] = None,
             device: Optional[torch.device] = None, progress: bool = True) -> dict:
    """Run the protocol over ``records``; returns metrics and the confusion matrix."""
    from .clips import ClipSet, _maybe_tqdm  # decoding lives with the clip set
    device = device or next(model.parameters()).device
    model.eval()
    t, k = model.num_segments, model.config.num_classes
    scale_size = scale_size or int(round(size * 256 / 224))
    scores, labels = [], []
    for r in _maybe_tqdm(records, progress, "tsm test"):
        frames = ClipSet._decode(r, range(r.num_frames))
        idx = clip_indices(len(frames), t, clips)
        scores.append(video_scores(model, frames, idx, size, scale_size, crops, device))
        labels.append(r.label)
    scores, labels = torch.stack(scores), torch.tensor(labels)
    if int(labels.max()) >= k:
        raise ValueError(f"label {int(labels.max())} in the list but the model has {k} classes")
    c1, c5 = topk_correct(scores, labels, (1, 5))
    cm = confusion_matrix(scores.argmax(1), labels, k)
    per_class = per_class_accuracy(cm)
    n = len(labels)
    return {"videos": n, "clips": clips, "crops": crops, "top1": 100 * c1 / n,
            "top5": 100 * c5 / n, "mean_class_accuracy": 100 * float(per_class.nanmean()),
            "per_class_accuracy": [None if v != v else 100 * v for v in per_class.tolist()],
            "confusion": cm.tolist()}


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tsm test", description="Multi-clip, multi-crop evaluation.")
    p.add_argument("checkpoint", help="a .pth file (ours, official TSM or mmaction2)")
    p.add_argument("--data", required=True, help="folder with val.txt, or a list file")
    p.add_argument("--clips", type=int, default=1, help="clips per video (default 1)")
    p.add_argument("--crops", type=int, default=1, choices=CROPS, help="views per clip")
    p.add_argument("--segments", type=int, help="frames per clip (default: the checkpoint's)")
    p.add_argument("--size", type=int, help="crop size (default: the training size or 224)")
    p.add_argument("--scale-size", type=int, help="short side before cropping (size*256/224)")
    p.add_argument("--device", default="auto")
    p.add_argument("--out", help="write the results as JSON here")
    p.add_argument("--no-progress", action="store_true")
    return p


def main(argv: Optional[list] = None) -> int:
    args = build_parser().parse_args(argv)
    from ..checkpoint.reading import load_checkpoint, read_checkpoint
    from .distributed import env_from, pick_device
    overrides = {"num_segments": args.segments} if args.segments else {}
    model = load_checkpoint(args.checkpoint, **overrides)
    train_cfg = read_checkpoint(args.checkpoint).get("meta", {}).get("train_config", {})
    size = args.size or train_cfg.get("size", 224)
    device = pick_device(args.device, env_from({}))
    data = Path(args.data)
    records = read_list(data / "val.txt" if data.is_dir() else data)
    res = evaluate(model.to(device), records, args.clips, args.crops, size, args.scale_size,
                   device, not args.no_progress)
    print(f"tsm test: {res['videos']} videos, {args.clips} clip(s) x {args.crops} crop(s): "
          f"top-1 {res['top1']:.2f}%  top-5 {res['top5']:.2f}%  "
          f"mean class {res['mean_class_accuracy']:.2f}%")
    for c, acc in enumerate(res["per_class_accuracy"]):
        print(f"  class {c:3d}: {'n/a' if acc is None else f'{acc:6.2f}%'}  "
              f"{' '.join(f'{v:4d}' for v in res['confusion'][c])}")
    if args.out:
        atomic_write_text(args.out, json.dumps(res, indent=1))
    return 0
