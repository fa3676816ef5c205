"""The folder of a dissection run, and reading it back (for reports, comparisons and the UI).

OUT/run.json              settings of the run (a re-run must match them)
OUT/index.json            clip id -> status ("done" / "failed") and error message
OUT/clips/<id>.json       per-clip record (written last: its presence marks a clip done):
                          label, prediction, top-5 (index, name, probability), frames used
OUT/failed/<id>.json      why a clip could not be processed (retried by a re-run)
OUT/maps/<id>.npz         raw maps (T, H, W) float32, low-res maps, logits, frames indices,
                          boxes, active flags, sanity-check maps (float16)
OUT/overlays/<id>.png     strip of the T frames with the map overlaid (per-clip scale)
OUT/overlays/<id>.gif     the same as an animation
OUT/overlays/<id>.flow.png  the flow stream's maps over the same frames (runs with
                          --flow-checkpoint; its arrays are flow_* in maps/<id>.npz)
OUT/metrics.json          per-clip scores + aggregates (method, baselines, sanity check)
OUT/units.json            unit dissection per layer
OUT/report.html           HTML report with Plotly charts
OUT/job.log               skipped clips and why
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Optional

import numpy as np

from .storage import load_npz, read_json


class DissectionLayout:
    """Paths inside one dissection run's folder (the demo's runs folder, which holds several
    such runs, is :class:`ui.runs.layout.RunLayout`)."""

    def __init__(self, root) -> None:
        self.root = Path(root)
        self.settings = self.root / "run.json"
        self.index = self.root / "index.json"
        self.metrics = self.root / "metrics.json"
        self.units = self.root / "units.json"
        self.report = self.root / "report.html"
        self.log = self.root / "job.log"

    def record(self, cid: str) -> Path:
        return self.root / "clips" / f"{cid}.json"

    def maps(self, cid: str) -> Path:
        return self.root / "maps" / f"{cid}.npz"

    def png(self, cid: str) -> Path:
        return self.root / "overlays" / f"{cid}.png"

    def gif(self, cid: str) -> Path:
        return self.root / "overlays" / f"{cid}.gif"

    def flow_png(self, cid: str) -> Path:
        return self.root / "overlays" / f"{cid}.flow.png"

    def failed(self, cid: str) -> Path:
        return self.root / "failed" / f"{cid}.json"

    def failed_files(self) -> list:
        return sorted(
            p for p in (self.root / "failed").glob("*.json") if not p.name.startswith(".")
        )

    def done_ids(self) -> list:
        """Ids of the finished clips; temporary files of a killed write (``.<id>.*.tmp.json``,
        left when a process dies mid-write) are not records."""
        return sorted(
            p.stem for p in (self.root / "clips").glob("*.json") if not p.name.startswith(".")
        )


@dataclass
class ClipFiles:
    """Where one clip's outputs are; ``record`` is its per-clip JSON record."""

    maps: Path
    png: Optional[Path]
    gif: Optional[Path]
    record: dict
    flow_png: Optional[Path] = None

    def load_maps(self) -> Dict[str, np.ndarray]:
        """The clip's arrays: ``maps`` (T, H, W) raw, ``lowres``, ``logits``, ``indices``, ..."""
        return load_npz(self.maps)


@dataclass
class Run:
    """A finished (or partial) run read back from its folder."""

    root: Path
    settings: dict
    metrics: dict
    units: dict
    clips: Dict[str, ClipFiles] = field(default_factory=dict)


def load_run(root) -> Run:
    """Read a run folder written by ``tsm dissect run`` (metrics may be absent while it runs)."""
    lay = DissectionLayout(root)
    if not lay.settings.is_file():
        raise FileNotFoundError(f"{lay.root} is not a dissection run (no run.json)")
    metrics = read_json(lay.metrics) if lay.metrics.is_file() else {}
    units = read_json(lay.units) if lay.units.is_file() else {}
    clips = {}
    for cid in lay.done_ids():
        png, gif, flow = lay.png(cid), lay.gif(cid), lay.flow_png(cid)
        clips[cid] = ClipFiles(
            lay.maps(cid),
            png if png.is_file() else None,
            gif if gif.is_file() else None,
            read_json(lay.record(cid)),
            flow if flow.is_file() else None,
        )
    return Run(lay.root, read_json(lay.settings), metrics, units, clips)
