"""Random-weight models where a runs folder holds them, for the tests and benchmarks of the app:
tiny TSN/TSM recognizers (our checkpoint format, class names and test protocol stored) and the
TSN/online-TSM detectors of the small synthetic config, built with the packages' own APIs."""

from __future__ import annotations

from pathlib import Path

import torch

from tsm_apps.data.protocol import TestProtocol

SEGMENTS = 4

# the tiny checkpoints' recorded test protocol: shorter side 32, centre crop 32
SMALL_PROTOCOL = TestProtocol(scale_size=32, crop_size=32, source="recorded by tsm train")


def tiny_recognizer(shift, num_classes: int, seed: int, in_channels: int = 3):
    """ResNet-18 at width 1/8, ``SEGMENTS`` segments, fc re-drawn so the CAMs are not all near
    zero (``in_channels`` 10: a flow model of new_length 5)."""
    from tsm_apps import build_recognizer

    torch.manual_seed(seed)
    m = build_recognizer(
        "resnet18",
        num_classes=num_classes,
        num_segments=SEGMENTS,
        shift=shift,
        width=0.125,
        dropout=0.0,
        in_channels=in_channels,
    )
    with torch.no_grad():
        m.fc.weight.normal_()
        m.fc.bias.zero_()
    return m.eval()


def write_checkpoints(runs: Path, classes: int = 5) -> dict:
    """Random-weight tiny TSN and TSM checkpoints (our format, class names stored) under
    ``runs/train/{tsn,tsm}/best.pth``."""
    from tsm_apps.checkpoint.reading import save_checkpoint

    names = [f"action {i}" for i in range(classes)]
    meta = {"classes": names, "test_protocol": SMALL_PROTOCOL.to_dict()}
    return {
        name: save_checkpoint(
            runs / "train" / name / "best.pth", tiny_recognizer(shift, classes, seed), meta
        )
        for seed, (name, shift) in enumerate((("tsn", None), ("tsm", "offline")))
    }


def write_detectors(runs: Path) -> dict:
    """Random-weight TSN and online-TSM detectors of the small synthetic config under
    ``runs/detection/{tsn,tsm}`` (``config.py`` + ``final.pth``, as ``tsm detect train`` leaves)."""
    from mmdet.registry import MODELS
    from mmengine.registry import init_default_scope

    import detection
    from detection.checkpoint import save_final
    from detection.inference import load_config

    config = Path(detection.__file__).parent / "configs" / "rfcn_synth_tsm.py"
    init_default_scope("mmdet")
    out = {}
    for seed, (name, shift) in enumerate((("tsn", None), ("tsm", "online"))):
        cfg = load_config(config)
        cfg.model.backbone.shift = shift
        torch.manual_seed(seed)
        folder = runs / "detection" / name
        folder.mkdir(parents=True, exist_ok=True)
        save_final(
            folder / "final.pth", MODELS.build(cfg.model), list(cfg.classes), 1, cfg.pretty_text
        )
        (folder / "config.py").write_text(cfg.pretty_text)
        out[name] = folder
    return out
