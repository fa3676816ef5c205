"""tsm_apps.data: real video loading, TSN sampling, transforms, the ImageNet-VID layout and the
FGFA motion split. The synthetic generators live in :mod:`tsm_apps.synth`."""
# Real video loading (PyAV is imported only when a video file is opened).
from .dataset import VideoDataset, collate_skip_none
from .lists import (SSv2Record, VideoRecord, read_ssv2, read_ssv2_labels, read_tsm_list,
                    ssv2_class_name, ssv2_video_records, write_tsm_list)
from .sampling import (dense_sample, dense_sample_test, make_sampler, sample_multi_clip,
                       sample_test, sample_train, sample_twice, sample_val)
from .transforms import (Compose, GroupCenterCrop, GroupMultiScaleCrop, GroupRandomCrop,
                         GroupRandomHorizontalFlip, GroupScale, GroupTenCrop, GroupThreeCrop,
                         Normalize, ToTensor, eval_transform, train_transform)
from .video import VideoDecodeError, count_frames, read_video_frames, write_video
# The FGFA motion split (numpy only at import).
from . import motion
