"""The settings of a dissection job: :class:`JobConfig` (what ``tsm dissect run`` takes, each
field a flag), the test-protocol changes it asks for, and its check against the ``run.json`` of
a run folder (a resumed run must share the settings that change the maps).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Optional

from tsm_apps.data.protocol import VIEWS, TestProtocol
from tsm_apps.options import SHARED_HELP, option

from .clips import resolve_data
from .faithfulness import DEFAULT_STEPS
from .gradcam import DEFAULT_WEIGHTING, WEIGHTINGS
from .layout import DissectionLayout
from .methods import METHODS, installed_methods
from .storage import read_json, write_json
from .threshold import THRESHOLD_KINDS
from .units import ND_QUANTILE


@dataclass
class JobConfig:
    """Everything ``tsm dissect run`` takes (each field a flag: :mod:`tsm_apps.options`).

    Clips are sampled, resized and cropped by the checkpoint's test protocol, the view ``tsm
    test`` scores; ``segments``, ``clips``, ``size``, ``scale_size``, ``view`` change it
    (``view='frame'``: the whole frame). ``class_index``: explain this class (default: the
    predicted one). ``faithfulness``: deletion/insertion curves of the maps and of the random
    map, ``faithfulness_steps`` pixel steps each (:mod:`dissect.faithfulness`). ``flow_checkpoint`` + ``flow_data``: the flow stream's maps too
    (:mod:`dissect.flow_job`)."""

    checkpoint: str
    data: str
    out: str = field(**option("run folder (re-running resumes)"))
    method: str = field(default="cam", **option("map method", choices=METHODS))
    weighting: str = field(
        default=DEFAULT_WEIGHTING,
        **option("Grad-CAM channel weights per clip or per frame", choices=WEIGHTINGS),
    )
    threshold: str = field(
        default="dataset",
        **option(
            "primary IoU threshold: dataset (20% of pixels) or max20 (20% of max)",
            choices=THRESHOLD_KINDS,
        ),
    )
    limit: Optional[int] = field(default=None, **option("only the first N clips"))
    class_index: Optional[int] = field(
        default=None, **option("explain this class (default: the predicted one)")
    )
    segments: Optional[int] = None
    clips: Optional[int] = None
    size: Optional[int] = None
    scale_size: Optional[int] = None
    view: Optional[str] = field(default=None, **option(SHARED_HELP["view"], choices=VIEWS))
    sanity: bool = field(default=True, **option("the randomised-weights sanity check"))
    units: bool = field(default=True, **option("unit dissection"))
    unit_clips: int = field(default=32, **option("clips used for unit dissection"))
    unit_quantile: float = field(default=ND_QUANTILE, **option("unit activation quantile"))
    overlays: bool = field(default=True, **option("PNG/GIF overlays"))
    faithfulness: bool = field(
        default=False,
        **option("deletion/insertion curves of the maps and of the random map (RISE)"),
    )
    faithfulness_steps: int = field(
        default=DEFAULT_STEPS,
        **option("--faithfulness: pixel steps per curve (frames: one step a frame)"),
    )
    seed: int = 0
    device: str = "auto"
    classes: Optional[str] = None
    flow_checkpoint: Optional[str] = field(
        default=None, **option("also the maps of this flow model on the same segments (two-stream)")
    )
    flow_data: Optional[str] = field(
        default=None, **option("--flow-checkpoint: the tsm flow extract folder of the same videos")
    )
    progress: bool = True

    def __post_init__(self) -> None:
        if self.method not in METHODS and self.method not in installed_methods():
            raise ValueError(f"unknown method {self.method!r}; expected one of {METHODS}")
        if self.threshold not in THRESHOLD_KINDS:
            raise ValueError(f"unknown threshold {self.threshold!r}; expected {THRESHOLD_KINDS}")
        if self.limit is not None and self.limit < 1:
            raise ValueError(f"--limit must be >= 1, got {self.limit}")
        if self.clips is not None and self.clips < 1:
            raise ValueError(f"--clips must be >= 1, got {self.clips}")
        if self.faithfulness_steps < 1:
            raise ValueError(f"--faithfulness-steps must be >= 1, got {self.faithfulness_steps}")
        if bool(self.flow_checkpoint) != bool(self.flow_data):
            raise ValueError(
                "--flow-checkpoint and --flow-data go together: the flow model and "
                "the tsm flow extract folder of the same videos"
            )

    def settings(self) -> dict:
        """The fields a resumed run must share with the run that started the folder."""
        keys = (
            "method",
            "weighting",
            "class_index",
            "segments",
            "clips",
            "size",
            "scale_size",
            "view",
            "sanity",
            "seed",
        )
        out = {k: getattr(self, k) for k in keys}
        # the curves' steps, None when off (so folders from before the option still resume)
        out["faithfulness"] = self.faithfulness_steps if self.faithfulness else None
        out["checkpoint"] = str(Path(self.checkpoint).resolve())
        out["data"] = str(resolve_data(self.data)[0].resolve())
        for k in ("flow_checkpoint", "flow_data"):
            out[k] = str(Path(getattr(self, k)).resolve()) if getattr(self, k) else None
        return out


def protocol_options(cfg: JobConfig) -> dict:
    """The test-protocol changes the job asks for (None: the checkpoint's own)."""
    return {
        "clips": cfg.clips,
        "crop_size": cfg.size,
        "scale_size": cfg.scale_size,
        "view": cfg.view,
    }


def check_settings(
    lay: DissectionLayout,
    cfg: JobConfig,
    write: bool = True,
    protocol: Optional[TestProtocol] = None,
) -> None:
    """Check ``cfg`` against ``run.json`` when the folder holds a run; write it if ``write``
    (with the resolved test ``protocol`` the clips follow, for readers of the run)."""
    want = cfg.settings()
    if lay.settings.is_file():
        have = read_json(lay.settings).get("settings", {})
        diff = {k: (have.get(k), v) for k, v in want.items() if have.get(k) != v}
        if diff:
            raise ValueError(
                f"{lay.root} holds a run with other settings {diff} "
                "(existing, requested); use another --out"
            )
    if write:
        extra = {"protocol": protocol.to_dict()} if protocol is not None else {}
        write_json(lay.settings, {"settings": want, "config": asdict(cfg), **extra})
