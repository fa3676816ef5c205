"""The report's "What each comparison controls": per group of comparisons, what TSN and TSM
share and what differs -- recognition from the demo's plan, detection from the two detector
configs as resolved now (:func:`detection.config_compare.config_differences`), dissection from
how the runs read their maps."""

from __future__ import annotations

import html

from ..plan import DETECT_CONFIGS, DETECTION_SEED_OFFSET, EPOCHS, OUTPUT_STRIDE, SHIFT

TITLE = "What each comparison controls"
DETECTION_SHARED = (
    ("train_dataloader.batch_sampler.clip_len", "frames per training clip"),
    ("train_dataloader.batch_size", "clips per step"),
    ("model.loss_frames", "frames the losses are on"),
    ("train_cfg.max_iters", "steps"),
)


def recognition_text() -> str:
    return (
        "Recognition: both recognizers train on the same synthetic temporal set, with the "
        f"same preset, {EPOCHS} epochs, output stride {OUTPUT_STRIDE} and the same training "
        f"seed; only the shift differs (`--shift {SHIFT['tsn']}` vs `--shift {SHIFT['tsm']}`). "
        "Both are scored with best.pth (chosen on val) on the same held-out test clips."
    )


def detection_text() -> str:
    """From the resolved configs: the settings that differ and those the comparison rests on."""
    from detection.config_compare import config_differences, setting

    tsn, tsm = DETECT_CONFIGS["tsn"], DETECT_CONFIGS["tsm"]
    try:
        diff = config_differences(tsn, tsm)
        shared = [(what, setting(tsm, key), setting(tsn, key)) for key, what in DETECTION_SHARED]
    except (OSError, ValueError) as e:
        return f"Detection: the configs {tsn} and {tsm} could not be read ({e})."
    differ = "; ".join(f"`{k}`: TSN {a!r}, TSM {b!r}" for k, (a, b) in diff.items())
    same = ", ".join(
        f"{what} {a}" if a == b else f"{what} TSM {a} / TSN {b}" for what, a, b in shared
    )
    return (
        f"Detection: the R-FCN configs {tsn}.py and {tsm}.py, resolved, differ in "
        f"{len(diff)} setting(s): {differ or 'none'}. Both: {same}; the same synthetic "
        f"VID data and, per training seed k, the detector seed k + {DETECTION_SEED_OFFSET}; "
        "scored on the same held-out test snippets."
    )


def dissection_text() -> str:
    return (
        "Dissection: both recognizers' maps on the same held-out test clips, CAM of each "
        "model's predicted class, scored against the same boxes and acting frames. A clip "
        "one model misclassifies is read with a map of a wrong class; the row restricted to "
        "the clips both classify correctly (n per seed) removes that difference."
    )


def controls_paragraphs() -> list:
    """One paragraph per group: recognition, detection, dissection."""
    return [recognition_text(), detection_text(), dissection_text()]


def controls_markdown(parts: list) -> str:
    return f"## {TITLE}\n\n" + "\n\n".join(parts) + "\n"


def controls_html(parts: list) -> str:
    return f"<h2>{TITLE}</h2>" + "".join(f"<p>{html.escape(p)}</p>" for p in parts)
