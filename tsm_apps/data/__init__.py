"""tsm_apps.data: THE clip pipeline -- samplers, decoding, resizing, crops, normalisation, each
checkpoint's test protocol -- and the real loaders (lists, videos, frame and flow folders, the
ImageNet-VID layout, the FGFA motion split). The synthetic generators live in
:mod:`tsm_apps.synth`."""

# Real video loading (PyAV is imported only when a video file is opened).
# The FGFA motion split (numpy only at import).
from . import motion
from .dataset import VideoDataset, collate_skip_none
from .decoder import VideoDecodeError
from .lists import (
    SSv2Record,
    read_ssv2,
    read_ssv2_labels,
    read_tsm_list,
    read_video_list,
    ssv2_class_name,
    ssv2_video_records,
    write_tsm_list,
)
from .normalization import FLOW_MEAN, FLOW_STD, IMAGENET_MEAN, IMAGENET_STD, normalize
from .pipeline import ClipViews, clip_indices, load_views
from .protocol import TestProtocol
from .record import VideoSource
from .sampling import (
    dense_sample,
    dense_sample_test,
    make_sampler,
    sample_multi_clip,
    sample_test,
    sample_train,
    sample_twice,
    sample_val,
)
from .transforms import (
    Compose,
    GroupCenterCrop,
    GroupMultiScaleCrop,
    GroupRandomCrop,
    GroupRandomHorizontalFlip,
    GroupRandomResizedCrop,
    GroupScale,
    GroupViews,
    Normalize,
    ToTensor,
    train_transform,
)
from .video import count_frames, read_video_frames
from .video_writer import write_video

__all__ = [
    "VideoDataset",
    "collate_skip_none",
    "SSv2Record",
    "read_ssv2",
    "read_ssv2_labels",
    "read_tsm_list",
    "read_video_list",
    "ssv2_class_name",
    "ssv2_video_records",
    "write_tsm_list",
    "FLOW_MEAN",
    "FLOW_STD",
    "IMAGENET_MEAN",
    "IMAGENET_STD",
    "normalize",
    "ClipViews",
    "clip_indices",
    "load_views",
    "TestProtocol",
    "VideoSource",
    "dense_sample",
    "dense_sample_test",
    "make_sampler",
    "sample_multi_clip",
    "sample_test",
    "sample_train",
    "sample_twice",
    "sample_val",
    "Compose",
    "GroupCenterCrop",
    "GroupMultiScaleCrop",
    "GroupRandomCrop",
    "GroupRandomHorizontalFlip",
    "GroupRandomResizedCrop",
    "GroupScale",
    "GroupViews",
    "Normalize",
    "ToTensor",
    "train_transform",
    "VideoDecodeError",
    "count_frames",
    "read_video_frames",
    "write_video",
    "motion",
]
