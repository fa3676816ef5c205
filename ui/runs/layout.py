"""The layout of a runs folder (``runs/demo`` by default), defined once.

The demo writes it, the report reads it and the app finds its files in it::

    <root>/data/temporal/            synthetic temporal set (val.txt, annotations.json, ...)
    <root>/data/vid/                 synthetic ImageNet-VID (Data/, Annotations/, ImageSets/)
    <root>/recognizers/<m>/          tsm train output: best.pth, eval.json, metrics.csv
    <root>/detection/<m>/            tsm detect train output: final.pth; test/metrics.json
    <root>/dissect/<m>/              tsm dissect run output: metrics.json, units.json
    <root>/dissect/compare/          tsm dissect compare output: compare.html
    <root>/bench/bench.json          tsm bench (optional)
    <root>/early/early.csv           tsm test ONLINE.pth --online ... --out <root>/early (optional)
    <root>/seeds/<k>/                training seed k's recognizers/, detection/, dissect/ (the
                                     first seed's are the ones above; data/ is shared)
    <root>/seeds.json                the data seed and the training seeds (first one first)
    <root>/intervals.json            each comparison's paired-bootstrap interval (with the report)
    <root>/timing.json, logs/, REPORT.md, REPORT.html

with ``<m>`` one of :data:`MODELS` (``tsn``: no shift, ``tsm``: the shift).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tsm_apps.evaluation.early_files import EARLY_CSV

MODELS = ("tsn", "tsm")
DEFAULT_ROOT = Path("runs") / "demo"


@dataclass(frozen=True)
class RunLayout:
    """Paths of one runs folder; every method returns a path under :attr:`root`."""

    root: Path

    def __post_init__(self) -> None:
        object.__setattr__(self, "root", Path(self.root))

    @property
    def data_temporal(self) -> Path:
        return self.root / "data" / "temporal"

    @property
    def data_vid(self) -> Path:
        return self.root / "data" / "vid"

    def recognizer(self, model: str) -> Path:
        return self.root / "recognizers" / model

    def recognizer_eval(self, model: str) -> Path:
        return self.recognizer(model) / "eval.json"

    def recognizer_test(self, model: str) -> Path:
        return self.recognizer(model) / "test.json"

    def detector(self, model: str) -> Path:
        return self.root / "detection" / model

    def detection_metrics(self, model: str) -> Path:
        return self.detector(model) / "test" / "metrics.json"

    def dissection(self, model: str) -> Path:
        return self.root / "dissect" / model

    @property
    def comparison(self) -> Path:
        return self.root / "dissect" / "compare"

    @property
    def bench(self) -> Path:
        return self.root / "bench" / "bench.json"

    @property
    def early_csv(self) -> Path:
        """Early recognition (``tsm test --online --out <root>/early``), not part of the demo."""
        return self.root / "early" / EARLY_CSV

    def seed_run(self, seed: int) -> "RunLayout":
        """The runs of training seed ``seed`` beside the first seed's (``<root>/seeds/<seed>``;
        only their recognizers, detection and dissect folders are used)."""
        return RunLayout(self.root / "seeds" / str(int(seed)))

    @property
    def seeds_file(self) -> Path:
        return self.root / "seeds.json"

    @property
    def intervals(self) -> Path:
        """The paired-bootstrap interval of each comparison (written with the report)."""
        return self.root / "intervals.json"

    @property
    def timing(self) -> Path:
        return self.root / "timing.json"

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    def rel(self, path: Path) -> str:
        """``path`` relative to the root, for messages."""
        return str(Path(path).relative_to(self.root))
