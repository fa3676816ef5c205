"""Tiny runs folders for the UI tests, built with the packages' own APIs at tiny sizes:
synthetic data from ``tsm_apps.data``, random-weight checkpoints from ``tsm_apps``, dissection
runs from ``dissect.job``, detectors from ``detection``."""
from __future__ import annotations

import json
from pathlib import Path

import torch

SEGMENTS = 4
SIZE = 32


def tiny_recognizer(shift, num_classes: int, seed: int):
    """ResNet-18 at width 1/8, fc re-drawn so the CAMs are not all near zero."""
    from tsm_apps import build_recognizer

    torch.manual_seed(seed)
    m = build_recognizer("resnet18", num_classes=num_classes, num_segments=SEGMENTS, shift=shift,
                         width=0.125, dropout=0.0)
    with torch.no_grad():
        m.fc.weight.normal_()
        m.fc.bias.zero_()
    return m.eval()


def write_temporal_data(root: Path) -> Path:
    """The synthetic temporal set at tiny size (``val.txt``, ``annotations.json``, videos/)."""
    from tsm_apps.data import synth_temporal

    synth_temporal.generate(root, videos=6, frames=8, size=SIZE, seed=0)
    return root


def write_dissection_runs(runs: Path, data: Path) -> dict:
    """TSN and TSM checkpoints under ``runs/train/{tsn,tsm}`` and their dissection runs under
    ``runs/dissect/{tsn,tsm}`` (2 clips each, no units/sanity/overlays to stay fast)."""
    from dissect.job import JobConfig, run_job
    from tsm_apps.checkpoint import save_checkpoint

    classes = json.loads((data / "annotations.json").read_text())["classes"]
    out = {}
    for seed, (name, shift) in enumerate((("tsn", None), ("tsm", "offline"))):
        ckpt = save_checkpoint(runs / "train" / name / "best.pth",
                               tiny_recognizer(shift, len(classes), seed))
        out[name] = runs / "dissect" / name
        run_job(JobConfig(checkpoint=str(ckpt), data=str(data), out=str(out[name]), limit=2,
                          sanity=False, units=False, overlays=False, device="cpu"),
                progress=False)
    return out
