"""Test protocols: each checkpoint origin's, mmaction2's read from its config text (as data,
never run), and where the views lie in the frame."""

import numpy as np
import pytest

from tsm_apps.config_text import read_config_text
from tsm_apps.data.pipeline import clip_indices, views_from_frames
from tsm_apps.data.protocol import TestProtocol, mmaction2_protocol

MM = """
crop = 256
model = dict(cls_head=dict(type='TSMHead', average_clips={avg!r}))
test_pipeline = [
    dict(type='DecordInit'),
    {sampler},
    dict(type='Resize', scale=(-1, crop)),
    dict(type={crop_kind!r}, crop_size=crop),
]
"""


def mm(
    sampler="dict(type='SampleFrames', clip_len=1, num_clips=8, test_mode=True)",
    crop_kind="ThreeCrop",
    avg="prob",
):
    return mmaction2_protocol(MM.format(sampler=sampler, crop_kind=crop_kind, avg=avg))


def test_mmaction2_test_pipelines_read_from_the_config_text():
    three = mm()
    assert (
        three.sampling,
        three.clips,
        three.scale_size,
        three.crop_size,
        three.crops,
        three.style,
        three.resize,
        three.size_rounding,
        three.fusion,
    ) == ("tsn", 1, 256, 256, 3, "mmaction2", "cv2", "round", "prob")
    ten = mm(crop_kind="TenCrop", avg="score")
    assert (ten.crops, ten.fusion) == (10, "logits")
    twice = mm(
        "dict(type='SampleFrames', clip_len=1, num_clips=8, test_mode=True, twice_sample=True)",
        "CenterCrop",
    )
    assert (twice.sampling, twice.clips, twice.crops) == ("twice", 2, 1)
    dense = mm(
        "dict(type='DenseSampleFrames', clip_len=1, frame_interval=1, num_clips=8, "
        "sample_range=32, num_sample_positions=4, test_mode=True)",
        "CenterCrop",
    )
    assert (dense.sampling, dense.clips, dense.dense_window) == ("dense", 4, 32)
    assert mmaction2_protocol(None).source.endswith("(no config in the checkpoint)")


def test_config_text_is_read_as_data_and_never_run(tmp_path):
    marker = tmp_path / "ran"
    text = (
        f"import os\nos.system('touch {marker}')\nx = open('{marker}', 'w')\n"
        "n = 2\nsize = n * 112\nmodel = dict(a=[1, -2, (3, 4)], b=dict(c=size), **dict(d=1))\n"
        "bad = __import__('os').getcwd()\nlater = n + 1\n"
    )
    cfg = read_config_text(text)
    assert not marker.exists()
    assert cfg["size"] == 224 and cfg["later"] == 3
    assert cfg["model"] == {"a": [1, -2, (3, 4)], "b": {"c": 224}, "d": 1}
    assert cfg["__skipped__"] == ["x", "bad"]
    with pytest.raises(ValueError, match=r"cfg: not valid Python config text \(line 1"):
        read_config_text("model = dict(", "cfg")


def test_views_are_boxes_of_the_frame_and_the_whole_frame_is_one_view():
    frames = np.random.default_rng(0).integers(0, 255, (4, 60, 80, 3), np.uint8)
    idx = clip_indices(TestProtocol(), 4, 2)
    assert idx.tolist() == [[1, 3]]
    # shorter side 30 -> 30x40; crop 20: official centre (round(5), round(10)) = (5, 10);
    # in frame pixels x 10*2 .. 30*2, y 5*2 .. 25*2
    views = views_from_frames(lambda i: frames[i], idx, TestProtocol(scale_size=30, crop_size=20))
    assert views.input.shape == (1, 2, 3, 20, 20)
    np.testing.assert_allclose(views.boxes, [[20, 10, 60, 50]])
    ten = views_from_frames(
        lambda i: frames[i], idx, TestProtocol(scale_size=30, crop_size=20, crops=10)
    )
    assert ten.input.shape == (10, 2, 3, 20, 20) and ten.flips == [False, True] * 5
    whole = views_from_frames(lambda i: frames[i], idx, TestProtocol(scale_size=30, view="frame"))
    assert whole.input.shape == (1, 2, 3, 30, 40)
    np.testing.assert_allclose(whole.boxes, [[0, 0, 80, 60]])
