"""The one place where the UI calls the other packages (``tsm_apps``, ``detection``, ``dissect``).

Views only see the plain records defined here (:class:`AttentionClip`, :class:`ModelMaps`) and
detection's own (:mod:`detection.records`), so that a change in a package's API is a change in
this package only.
``detection`` (mmdet) and ``dissect`` are imported inside the functions that use them, so a
view that needs neither starts fast; results that are absent raise :class:`Unavailable`, which
the views show as a message. One module per concern: :mod:`.base` (video), :mod:`.detection`,
:mod:`.dissection`, :mod:`.recognition` (checkpoints and maps on any video), :mod:`.live` (live streams),
:mod:`.flow` (the flow stream's maps beside the RGB ones).
"""

from .base import (
    MODELS,
    VID_FRAME_TEMPLATE,
    Decoded,
    DecodeLimits,
    Progress,
    Unavailable,
    VideoDecodeError,
    read_frames,
    read_video,
    working_size,
)
from .checkpoints import model_of_checkpoint
from .detection import (
    SCORE_FLOOR,
    DetectorSpec,
    detect,
    find_detectors,
    found_objects,
    load_detector,
    read_truth,
    vid_results,
)
from .dissection import (
    BASELINES,
    AttentionClip,
    Dissection,
    attention_overlay,
    clip_attention,
    dissection_clips,
    dissection_stamp,
    dissection_summary,
    find_dissection,
    load_dissection,
)
from .flow import FlowMaps, flow_caption, flow_maps, load_flow_recognizer, video_flow_folder
from .recognition import (
    ClipInput,
    LoadedRecognizer,
    ModelMaps,
    for_session,
    load_recognizer,
    map_methods,
    maps_on_frames,
    model_maps,
    prepare_clip,
    top_classes,
)

__all__ = [
    "MODELS",
    "VID_FRAME_TEMPLATE",
    "DecodeLimits",
    "Decoded",
    "Progress",
    "Unavailable",
    "VideoDecodeError",
    "read_frames",
    "read_video",
    "working_size",
    "model_of_checkpoint",
    "DetectorSpec",
    "SCORE_FLOOR",
    "detect",
    "find_detectors",
    "found_objects",
    "load_detector",
    "read_truth",
    "vid_results",
    "AttentionClip",
    "BASELINES",
    "Dissection",
    "attention_overlay",
    "clip_attention",
    "dissection_clips",
    "dissection_stamp",
    "dissection_summary",
    "find_dissection",
    "load_dissection",
    "FlowMaps",
    "flow_caption",
    "flow_maps",
    "load_flow_recognizer",
    "video_flow_folder",
    "ClipInput",
    "LoadedRecognizer",
    "ModelMaps",
    "for_session",
    "load_recognizer",
    "map_methods",
    "maps_on_frames",
    "model_maps",
    "prepare_clip",
    "top_classes",
]
