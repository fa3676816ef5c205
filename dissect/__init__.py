"""CAM-based network dissection of clip recognizers (TSM vs TSN).

Public API (what the UI and scripts call):

- :func:`compute_clip_maps` (exact CAM or a Grad-CAM-family method for clips),
  :func:`compute_cam`, :func:`compute_gradcam`, :func:`class_activation_maps`
- :func:`flow_clip_maps` (the flow stream's maps on an RGB clip's segments; :mod:`dissect.flow_cam`)
- :func:`detector_attention` (EigenCAM-style maps for a detector backbone's frames)
- :func:`faithfulness_curves` (deletion / insertion over pixels and over frames:
  :mod:`dissect.faithfulness`)
- :func:`load_run` (a ``tsm dissect run`` folder: settings, metrics, units, per-clip files)
- :func:`overlay` / :func:`overlay_in_frame` / :func:`normalize_for_display` (display only)
- metrics, thresholds and unit dissection in :mod:`dissect.metrics`, :mod:`dissect.threshold`,
  :mod:`dissect.units`; batch jobs in :mod:`dissect.job`
  (settings: :mod:`dissect.job_config`), reports in :mod:`dissect.report`.

Never imports mmdet/mmengine/mmcv.
"""

from .cam import ClipMaps, class_activation_maps, compute_cam, upsample_maps
from .capture import capture
from .detector_attention import detector_attention
from .faithfulness import faithfulness_curves
from .flow_cam import (
    FlowClip,
    compute_flow_maps,
    flow_clip_maps,
    flow_stack_indices,
    load_flow_clip,
)
from .gradcam import compute_gradcam
from .layout import ClipFiles, Run, load_run
from .methods import METHODS, compute_clip_maps
from .overlay import normalize_for_display, overlay, overlay_in_frame

__all__ = [
    "ClipMaps",
    "class_activation_maps",
    "compute_cam",
    "upsample_maps",
    "capture",
    "detector_attention",
    "faithfulness_curves",
    "FlowClip",
    "compute_flow_maps",
    "flow_clip_maps",
    "flow_stack_indices",
    "load_flow_clip",
    "compute_gradcam",
    "ClipFiles",
    "Run",
    "load_run",
    "METHODS",
    "compute_clip_maps",
    "normalize_for_display",
    "overlay",
    "overlay_in_frame",
]
