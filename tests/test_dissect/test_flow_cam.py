"""The flow stream's CAM on an RGB clip's segments: stack indices, input, maps, bad input."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from dissect import flow_clip_maps, flow_stack_indices, load_flow_clip
from dissect.flow_cam import check_flow_folder, compute_flow_maps, flow_new_length
from dissect_fixtures import NUM_CLASSES, SEGMENTS, read_flow_by_hand, tiny_model, write_flow_folder
from tsm_apps.data.protocol import TestProtocol
from tsm_apps.data.sampling import sample_test as centre_indices

FLOW_SIZE = 64
AS_STORED = TestProtocol(scale_size=FLOW_SIZE, crop_size=FLOW_SIZE)  # 64x64 fields: no resize


def test_stack_indices_start_at_the_rgb_frames():
    # 16 frames, 4 segments: RGB centre frames 2, 6, 10, 14; 15 flow fields (0..14), L = 5
    rgb = centre_indices(16, 4)
    assert rgb.tolist() == [2, 6, 10, 14]
    assert flow_stack_indices(rgb, 5, 15).tolist() == [
        [2, 3, 4, 5, 6],
        [6, 7, 8, 9, 10],
        [10, 11, 12, 13, 14],
        [14, 14, 14, 14, 14],
    ]
    # 8 frames, 4 segments: frames 1, 3, 5, 7; 7 fields; L = 2: the last segment repeats field 6
    assert flow_stack_indices(centre_indices(8, 4), 2, 7).tolist() == [
        [1, 2],
        [3, 4],
        [5, 6],
        [6, 6],
    ]


def test_flow_input_channels_are_the_fields_of_each_segment(tmp_path):
    folder = write_flow_folder(tmp_path / "v", 7, FLOW_SIZE, constant=True)
    clip = load_flow_clip(folder, [1, 3, 5, 7], 2, AS_STORED, num_frames=8)
    assert clip.input.shape == (4, 4, FLOW_SIZE, FLOW_SIZE)
    fields = {0: [1, 2], 1: [3, 4], 2: [5, 6], 3: [6, 6]}  # by hand: fields i_t, i_t + 1
    for t, ks in fields.items():
        want = []
        for k in ks:  # channels [x_1, y_1, x_2, y_2]
            want += [20 + 10 * k, 200 - 10 * k]
        got = clip.input[t].mean(dim=(1, 2)) * 0.226 + 0.5
        assert got.tolist() == pytest.approx([v / 255 for v in want], abs=1e-6)


def _cam_by_hand(model, folder, stacks, k):
    """The CAM of class ``k`` from the PIL-read fields ``stacks[t]`` (field indices)."""
    x = torch.tensor(
        np.stack(
            [np.stack([c for f in seg for c in read_flow_by_hand(folder, f)]) for seg in stacks]
        ),
        dtype=torch.float32,
    )
    x = (x / 255 - 0.5) / 0.226  # (T, 2L, S, S)
    with torch.no_grad():
        feats = model.backbone(x)  # (T, C, h, w)
        logits = model.fc(feats.mean(dim=(2, 3))).mean(0)  # (K,)
    k = int(logits.argmax()) if k is None else k
    w = model.fc.weight[k].detach()
    low = (feats * w[None, :, None, None]).sum(dim=1)  # (T, h, w)
    return low, logits, k


@pytest.mark.parametrize("class_idx", [None, 2])
def test_flow_cam_is_fc_weights_times_features_on_the_stacked_flow(tmp_path, class_idx):
    folder = write_flow_folder(tmp_path / "v", 15, FLOW_SIZE, seed=3)
    model = tiny_model("offline", seed=5, in_channels=10)  # new_length 5
    rgb = centre_indices(16, SEGMENTS)
    clip, res = flow_clip_maps(model, folder, rgb, AS_STORED, class_idx=class_idx, num_frames=16)
    stacks = [[2, 3, 4, 5, 6], [6, 7, 8, 9, 10], [10, 11, 12, 13, 14], [14] * 5]
    assert clip.indices.tolist() == stacks
    low, logits, k = _cam_by_hand(model, folder, stacks, class_idx)
    assert int(res.classes[0]) == k
    torch.testing.assert_close(res.logits[0], logits, rtol=0, atol=1e-5)
    torch.testing.assert_close(res.lowres[0], low, rtol=1e-6, atol=1e-5)
    up = F.interpolate(
        low[:, None], size=(FLOW_SIZE, FLOW_SIZE), mode="bilinear", align_corners=False
    )[:, 0]
    torch.testing.assert_close(res.maps[0], up, rtol=1e-6, atol=1e-5)
    # CAM identity: the map's mean plus the bias is the clip logit
    bias = float(model.fc.bias[k].detach())
    assert float(low.mean()) + bias == pytest.approx(float(logits[k]), abs=1e-5)


def test_resized_flow_follows_the_rgb_geometry(tmp_path):
    folder = write_flow_folder(tmp_path / "v", 7, FLOW_SIZE, seed=1)
    clip = load_flow_clip(folder, [1, 3, 5, 7], 2, TestProtocol(scale_size=16, crop_size=16))
    assert clip.input.shape == (4, 4, 16, 16)
    res = compute_flow_maps(tiny_model(None, in_channels=4), clip)
    assert res.maps.shape == (1, 4, 16, 16) and res.logits.shape == (1, NUM_CLASSES)


def test_bad_flow_inputs_are_named(tmp_path):
    with pytest.raises(
        FileNotFoundError,
        match=r"flow folder not found for vid\.mp4: expected "
        r".*nowhere",
    ):
        check_flow_folder(tmp_path / "nowhere", 8, "vid.mp4")
    folder = write_flow_folder(tmp_path / "v", 5, FLOW_SIZE, constant=True)
    with pytest.raises(ValueError, match=r"5 flow fields, but vid\.mp4 has 8 frames: expected 7"):
        check_flow_folder(folder, 8, "vid.mp4")
    with pytest.raises(
        ValueError,
        match=r"rgb\.pth is not a flow model: it takes 3 input "
        r"channels per segment",
    ):
        flow_new_length({"in_channels": 3}, "rgb.pth")
    assert flow_new_length({"in_channels": 10}, "flow.pth") == 5
    clip = load_flow_clip(folder, [0, 1, 2, 3], 2, AS_STORED)
    with pytest.raises(
        ValueError,
        match=r"takes 10 channels per segment \(new_length 5\), the "
        r"flow clip of .* is \(4, 4, 64, 64\)",
    ):
        compute_flow_maps(tiny_model(None, in_channels=10), clip)
