"""The report's pictures: TSN and TSM CAM strips of clips chosen by rule, and detection frames
where the online-TSM detector finds an object the TSN detector misses.

Strips are the dissection runs' own overlays (``dissect/<m>/overlays/<id>.png``: the clip's
frames with the map, per-clip colour scale, and the actor's box in green). Detection frames are
drawn from ``detection/<m>/test/results.json`` (``tsm detect test``) over the VID test images,
with ground truth in green; a ground-truth object counts as found under the VID evaluation's
rule (same class, IoU >= min(0.5, wh/((w+10)(h+10)))) by a box scoring at least
:data:`MIN_SCORE`.
"""

from __future__ import annotations

import base64
import html
import io
from pathlib import Path
from typing import Callable, Optional

import numpy as np

from tsm_apps.io import read_json

from ... import models
from ...runs.layout import MODELS, RunLayout

RULES: tuple[tuple[str, Callable[[bool, bool], bool]], ...] = (
    ("TSM right, TSN wrong", lambda tsn, tsm: tsm and not tsn),
    ("both right", lambda tsn, tsm: tsn and tsm),
    ("both wrong", lambda tsn, tsm: not tsn and not tsm),
)
MIN_SCORE = 0.3
MAX_DETECTION_FRAMES = 4


def _img(png: bytes, alt: str, width: Optional[int] = None) -> str:
    w = f" width='{width}'" if width else ""
    return (
        f"<img alt='{html.escape(alt)}'{w} style='image-rendering:pixelated;max-width:100%' "
        f"src='data:image/png;base64,{base64.b64encode(png).decode()}'>"
    )


def _png(arr: np.ndarray) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(arr).save(buf, format="PNG")
    return buf.getvalue()


def choose_clips(records: dict, per_rule: int = 1) -> list[tuple[str, str]]:
    """``[(rule, clip id)]``: the first ``per_rule`` clips (by id) of each rule; ``records``
    maps a clip id to ``{"tsn": record, "tsm": record}`` (``pred`` and ``label`` each)."""
    out = []
    for rule, test in RULES:
        hits = [
            cid
            for cid in sorted(records)
            if records[cid]["tsn"].get("label") is not None
            and test(
                records[cid]["tsn"]["pred"] == records[cid]["tsn"]["label"],
                records[cid]["tsm"]["pred"] == records[cid]["tsm"]["label"],
            )
        ]
        out += [(rule, cid) for cid in hits[:per_rule]]
    return out


def cam_section(root: Path, per_rule: int = 1) -> str:
    """HTML: for each rule, a clip's TSN strip above its TSM strip, with labels."""
    from dissect.layout import load_run

    lay = RunLayout(root)
    head = "<h2>Where the networks look: CAM strips of chosen clips</h2>"
    folders = {m: lay.dissection(m) for m in MODELS}
    if not all((f / "run.json").is_file() for f in folders.values()):
        return head + "<p>missing: the dissection runs (dissect/tsn, dissect/tsm)</p>"
    runs = {m: load_run(f) for m, f in folders.items()}
    common = set(runs["tsn"].clips) & set(runs["tsm"].clips)
    records = {c: {m: runs[m].clips[c].record for m in runs} for c in common}
    out = [
        head,
        "<p>One clip per rule (the first by id); rows: TSN, then TSM; the frames the "
        "recognizers saw with the CAM of the predicted class (per-clip colour scale) "
        "and the actor's box in green.</p>",
    ]
    chosen = choose_clips(records, per_rule)
    if not chosen:
        return head + "<p>no labelled clip in both runs</p>"
    for rule, cid in chosen:
        rec = records[cid]
        out.append(
            f"<h3>{html.escape(rule)}: clip {html.escape(cid)} — class "
            f"{html.escape(str(rec['tsn'].get('label_name') or rec['tsn']['label']))}</h3>"
        )
        for m in MODELS:
            png = runs[m].clips[cid].png
            pred = rec[m].get("pred_name") or rec[m]["pred"]
            cell = (
                _img(png.read_bytes(), f"{m} {cid}")
                if png and png.is_file()
                else "(run without overlays)"
            )
            out.append(f"<p><b>{m.upper()}</b> predicts {html.escape(str(pred))}<br>{cell}</p>")
    return "\n".join(out)


def _frame_truths(frames: list, classes: list) -> dict:
    from detection.metric import AnnotationCache

    return AnnotationCache(classes).truths(frames)


def missed_by_tsn(root: Path) -> list[dict]:
    """Frames where online TSM finds a ground-truth object TSN misses, corrupted frames first,
    then frames with a fast object (motion IoU < 0.7), then the rest (each in frame order)."""
    lay = RunLayout(root)
    res = {m: read_json(lay.detector(m) / "test" / "results.json", missing_ok=True) for m in MODELS}
    if any(r is None for r in res.values()):
        return []
    from detection.records import FrameDetections
    from detection.results import frame_path
    from detection.vid_eval import found_truth

    classes = list(res["tsm"]["classes"])
    dets = {m: {frame_path(f["img_path"]): f for f in r["frames"]} for m, r in res.items()}
    paths = sorted(set(dets["tsn"]) & set(dets["tsm"]))
    truths = _frame_truths(paths, classes)
    out = []
    for p in paths:
        found = {}
        for m in MODELS:
            f = dets[m][p]
            keep = np.asarray(f["scores"], float) >= MIN_SCORE
            found[m] = found_truth(
                FrameDetections(
                    np.asarray(f["boxes"], float).reshape(-1, 4)[keep],
                    np.asarray(f["scores"], float)[keep],
                    np.asarray(f["labels"])[keep],
                ),
                truths[p],
            )
        extra = found["tsm"] & ~found["tsn"]
        if extra.any():
            t = truths[p]
            fast = t.motion_iou is not None and bool((t.motion_iou[extra] < 0.7).any())
            out.append(
                {
                    "path": p,
                    "corruption": t.corruption,
                    "fast": fast,
                    "objects": [classes[int(c)] for c in t.label_ids[extra]],
                    "truth": t,
                    "dets": {m: dets[m][p] for m in dets},
                }
            )
    return sorted(out, key=lambda d: (d["corruption"] is None, not d["fast"]))


def _draw(path: str, truth, det: dict, model: str, classes: list) -> bytes:
    from PIL import Image

    from tsm_apps.viz import draw_boxes

    img = np.asarray(Image.open(path).convert("RGB"))
    img = draw_boxes(img, truth.boxes, ["" for _ in truth.boxes], color=models.GT_COLOR)
    keep = np.asarray(det["scores"], float) >= MIN_SCORE
    boxes = np.asarray(det["boxes"], float).reshape(-1, 4)[keep]
    caps = [
        f"{classes[int(c)]} {s:.2f}"
        for c, s in zip(np.asarray(det["labels"])[keep], np.asarray(det["scores"])[keep])
    ]
    return _png(draw_boxes(img, boxes, caps, color=models.rgb(model)))


def detection_section(root: Path, limit: int = MAX_DETECTION_FRAMES) -> str:
    head = "<h2>Detection: frames where online TSM finds an object TSN misses</h2>"
    try:
        frames = missed_by_tsn(root)
    except (OSError, ValueError, KeyError) as e:
        return head + f"<p>not available: {html.escape(str(e))}</p>"
    if not frames:
        return head + "<p>none (or detection/{tsn,tsm}/test/results.json missing)</p>"
    res = read_json(RunLayout(root).detector("tsm") / "test" / "results.json")
    out = [
        head,
        f"<p>{len(frames)} such frames; the first {min(limit, len(frames))} shown "
        "(corrupted, then fast-moving objects first). Left: TSN, right: online TSM; "
        f"ground truth in green; boxes scoring >= {MIN_SCORE}.</p>",
    ]
    for f in frames[:limit]:
        tags = (
            ", ".join(
                x
                for x in (
                    f["corruption"] and f"corrupted ({f['corruption']})",
                    f["fast"] and "fast object",
                )
                if x
            )
            or "clean, slow/medium"
        )
        out.append(
            f"<h3>{html.escape(Path(f['path']).parent.name)}/"
            f"{html.escape(Path(f['path']).name)} — {html.escape(tags)}; TSM alone finds "
            f"{html.escape(', '.join(f['objects']))}</h3><p>"
            + " ".join(
                _img(_draw(f["path"], f["truth"], f["dets"][m], m, res["classes"]), m, 360)
                for m in MODELS
            )
            + "</p>"
        )
    return "\n".join(out)
