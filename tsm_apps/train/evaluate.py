"""``tsm test``: multi-clip, multi-crop evaluation of a recognizer checkpoint.

Protocol (TSN/TSM, mmaction2 ``ThreeCrop``/``TenCrop``): each video gives ``clips`` clips of
``T`` frames (clip ``j`` takes, in every one of the ``T`` segments, the frame at offset
``(j + 0.5) / clips`` of the segment); frames are resized so the short side is ``scale_size``,
then cut into ``crops`` views of ``size x size``: 1 = centre, 3 = both ends and the centre of
the long side, 10 = four corners and centre, plus their mirror images. The video's score is
the mean softmax over its ``clips x crops`` views. Reported: per video the top-5 classes with
names and probabilities and the frames used; over the labelled videos top-1, top-5, mean class
accuracy, per-class accuracy and the confusion matrix (rows = true class). Unlabelled videos
get predictions only.

``--data`` takes any form :func:`tsm_apps.data.sources.find_sources` reads (a video, a folder
of videos or frame folders, a list file with optional frame counts and labels, an SSv2 JSON).
Inputs are checked (checkpoint readable and of a known layout, videos listed, class-name file)
before the model is built or a frame decoded.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Optional, Sequence

import torch
from torch import Tensor, nn
from torch.nn import functional as F

from ..io import atomic_write_text
from .clips import MEAN, STD
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
    """Mean softmax ``(K,)`` over the views of one video; ``frames`` uint8 ``(F, H, W, 3)``
    indexed by the positions in ``num_frames_idx``."""
    views = torch.cat([crop_views(frames[idx], size, scale_size, crops) for idx in num_frames_idx])
    return F.softmax(model(views.to(device)).float(), dim=1).mean(0).cpu()


def _frames_of(video, wanted: list) -> tuple:
    """Decode only the ``wanted`` frames: ``(uint8 (U, H, W, 3), wanted re-indexed into U)``."""
    from ..data.video import read_video_frames
    unique = sorted({i for clip in wanted for i in clip})
    frames = read_video_frames(video.path, unique, getattr(video, "frame_template", None),
                               getattr(video, "start_index", 1))
    pos = {f: i for i, f in enumerate(unique)}
    return torch.from_numpy(frames), [[pos[i] for i in clip] for clip in wanted]


def top_k(scores: Tensor, names: Sequence[str], k: int = 5) -> list:
    """``[{"index", "name", "prob"}]`` of the ``k`` highest of ``scores`` ``(K,)``."""
    p, i = scores.topk(min(k, scores.numel()))
    return [{"index": int(c), "name": names[int(c)] if names else f"class {int(c)}",
             "prob": float(v)} for v, c in zip(p, i)]


def evaluate(model: nn.Module, records: Sequence, clips: int = 1, crops: int = 1,
             size: int = 224, scale_size: Optional[int] = None,
             device: Optional[torch.device] = None, progress: bool = True,
             names: Sequence[str] = ()) -> dict:
    """Run the protocol over ``records`` (anything with ``path``, ``num_frames``, ``label``
    (None: unlabelled) and optionally ``name``/``frame_template``/``start_index``); returns
    per-video predictions and, over the labelled videos, the metrics."""
    from .clips import _maybe_tqdm
    device = device or next(model.parameters()).device
    model.eval()
    t, k = model.num_segments, model.config.num_classes
    scale_size = scale_size or int(round(size * 256 / 224))
    scores, videos = [], []
    for r in _maybe_tqdm(records, progress, "tsm test"):
        idx = clip_indices(r.num_frames, t, clips)
        frames, local = _frames_of(r, idx)
        scores.append(video_scores(model, frames, local, size, scale_size, crops, device))
        videos.append({"video": str(getattr(r, "name", r.path)), "label": r.label,
                       "num_frames": r.num_frames, "frames": idx,
                       "top5": top_k(scores[-1], names)})
    out = {"videos": len(videos), "clips": clips, "crops": crops, "predictions": videos}
    labelled = [i for i, r in enumerate(records) if r.label is not None]
    out["labelled"] = len(labelled)
    if labelled:
        out.update(_accuracy(torch.stack([scores[i] for i in labelled]),
                             torch.tensor([records[i].label for i in labelled]), k))
    return out


def _accuracy(scores: Tensor, labels: Tensor, k: int) -> dict:
    if int(labels.max()) >= k:
        raise ValueError(f"label {int(labels.max())} in the data but the model has {k} classes")
    c1, c5 = topk_correct(scores, labels, (1, 5))
    cm = confusion_matrix(scores.argmax(1), labels, k)
    per_class = per_class_accuracy(cm)
    n = len(labels)
    return {"top1": 100 * c1 / n, "top5": 100 * c5 / n,
            "mean_class_accuracy": 100 * float(per_class.nanmean()),
            "per_class_accuracy": [None if v != v else 100 * v for v in per_class.tolist()],
            "confusion": cm.tolist()}


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tsm test", description="Multi-clip, multi-crop evaluation.")
    p.add_argument("checkpoint", help="a .pth file (ours, official TSM or mmaction2)")
    p.add_argument("--data", required=True,
                   help="a video, a folder of videos or frame folders, a list file "
                        "(path [num_frames [label]]), a folder with val.txt or an SSv2 JSON")
    p.add_argument("--classes", help="class names: one a line, or SSv2 labels.json "
                                     "(default: the checkpoint's, or a bundled list)")
    p.add_argument("--clips", type=int, default=1, help="clips per video (default 1)")
    p.add_argument("--crops", type=int, default=1, choices=CROPS, help="views per clip")
    p.add_argument("--segments", type=int, help="frames per clip (default: the checkpoint's)")
    p.add_argument("--size", type=int, help="crop size (default: the training size or 224)")
    p.add_argument("--scale-size", type=int, help="short side before cropping (size*256/224)")
    p.add_argument("--device", default="auto")
    p.add_argument("--out", help="write the results as JSON here")
    p.add_argument("--no-progress", action="store_true")
    from .two_stream import add_arguments
    add_arguments(p)  # --fuse FLOW.pth (two-stream), --online (early recognition)
    return p


def _checked(args) -> tuple:
    """Everything ``tsm test`` reads, checked before the model is built or a frame decoded:
    ``(checkpoint dict, layout, config fields, videos, class names)``."""
    from ..checkpoint.reading import inspect_checkpoint
    from ..data.classes import class_names
    from ..data.sources import find_sources
    path = Path(args.checkpoint)
    ckpt, _, fields = inspect_checkpoint(path, "tsm test needs a recognizer checkpoint")
    k = int(fields["num_classes"])
    videos = find_sources(args.data)
    bad = next((v for v in videos if v.label is not None and v.label >= k), None)
    if bad is not None:
        raise ValueError(f"{bad.path}: label {bad.label} but the checkpoint has {k} classes")
    names = class_names(k, ckpt, args.classes, file_name=path.name)
    return ckpt, videos, names


SHOWN = 20  # videos whose top-5 is printed (all are in --out)


def _print(res: dict, clips: int, crops: int) -> None:
    for v in res["predictions"][:SHOWN]:
        best = ", ".join(f"{t['name']} {100 * t['prob']:.1f}%" for t in v["top5"])
        label = "" if v["label"] is None else f" [label {v['label']}]"
        print(f"  {v['video']}{label}: {best}")
    if res["videos"] > SHOWN:
        print(f"  ... {res['videos'] - SHOWN} more videos (all in --out)")
    if not res["labelled"]:
        print(f"tsm test: {res['videos']} videos, no labels: predictions only")
        return
    print(f"tsm test: {res['labelled']} labelled of {res['videos']} videos, {clips} clip(s) x "
          f"{crops} crop(s): top-1 {res['top1']:.2f}%  top-5 {res['top5']:.2f}%  "
          f"mean class {res['mean_class_accuracy']:.2f}%")


def main(argv: Optional[list] = None) -> int:
    args = build_parser().parse_args(argv)
    if args.online or args.fuse:
        from .two_stream import main_streams
        return main_streams(args)
    from ..checkpoint.reading import load_checkpoint
    from .distributed import env_from, pick_device
    ckpt, videos, names = _checked(args)
    for v in (v for v in videos if v.error):
        print(f"tsm test: skipped {v.path}: {v.error}", file=sys.stderr)
    videos = [v for v in videos if not v.error]
    overrides = {"num_segments": args.segments} if args.segments else {}
    model = load_checkpoint(args.checkpoint, **overrides)
    meta = ckpt.get("meta") if isinstance(ckpt.get("meta"), dict) else {}
    size = args.size or (meta.get("train_config") or {}).get("size", 224)
    device = pick_device(args.device, env_from({}))
    res = evaluate(model.to(device), videos, args.clips, args.crops, size, args.scale_size,
                   device, not args.no_progress, names)
    res["classes"] = names
    _print(res, args.clips, args.crops)
    if args.out:
        atomic_write_text(args.out, json.dumps(res, indent=1))
    return 0
