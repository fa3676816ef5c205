"""Video object detection on mmdet: online-TSM R-FCN for ImageNet-VID.

The only package of the project that imports mmdet/mmengine/mmcv. Importing it registers the
classes below in mmdet's registries (configs use
``custom_imports=dict(imports=['detection'], allow_failed_imports=False)``).
"""

# model (registered in mmdet MODELS / TASK_UTILS / DATA_SAMPLERS)
from .backbone import TSMResNet
from .clips import ClipBatchSampler, VideoShardSampler
from .detector import ClipRFCN
from .msra import ClipHorizontalFlip, PlainRPNHead, RFCNSplitNeck
from .ohem import HardestRoISampler
from .ps_roi import PSRoIVote, ps_roi_vote
from .rfcn_head import RFCNBBoxHead, RFCNRoIHead

__all__ = [
    "TSMResNet",
    "ClipBatchSampler",
    "VideoShardSampler",
    "ClipRFCN",
    "HardestRoISampler",
    "PSRoIVote",
    "ps_roi_vote",
    "RFCNBBoxHead",
    "RFCNRoIHead",
    "ClipHorizontalFlip",
    "PlainRPNHead",
    "RFCNSplitNeck",
]

# ImageNet-VID data, metric and results (registered in mmdet DATASETS / METRICS)
from .metric import DetectionsDump, VIDMetric  # noqa: E402
from .results import format_table, latest_vid_results, write_metrics  # noqa: E402
from .vid_dataset import ImageNetVIDDataset  # noqa: E402
from .vid_eval import evaluate_vid  # noqa: E402

__all__ += [
    "DetectionsDump",
    "VIDMetric",
    "format_table",
    "latest_vid_results",
    "write_metrics",
    "ImageNetVIDDataset",
    "evaluate_vid",
]

# running a trained detector (inference) and weights_only-safe checkpoints (HOOKS)
from .hooks import PlainCheckpointHook  # noqa: E402
from .inference import load_detector  # noqa: E402
from .live import detect_video  # noqa: E402
from .records import FrameDetections, FrameTruth  # noqa: E402

__all__ += ["PlainCheckpointHook", "FrameDetections", "FrameTruth", "detect_video", "load_detector"]
