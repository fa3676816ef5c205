"""Flow modality: flow files, reading, the cross-modality init, RGB->flow transfer, official Flow
checkpoints (a stand-in of the official ``TSN(modality='Flow')`` module)."""

import json

import numpy as np
import pytest
import torch
from torch import nn

from tests.test_tsm_apps.test_checkpoint import RefTSN, randomize
from tsm_apps.checkpoint.reading import load_checkpoint, save_checkpoint
from tsm_apps.data.flow import count_flow, flow_to_uint8, read_flow
from tsm_apps.data.pipeline import clip_indices, flow_stacks, views_from_frames
from tsm_apps.data.protocol import TestProtocol
from tsm_apps.data.transforms import mirror
from tsm_apps.flow.extract import FlowJob, extract_video
from tsm_apps.models import build_recognizer
from tsm_apps.models.modality import cross_modality_weight, rgb_to_flow_state


def test_flow_to_uint8_clips_and_maps_like_dense_flow():
    # round(255 * (v + 20) / 40): -25 -> 0, -20 -> 0, 0 -> 127.5 -> 128, 1 -> 133.875 -> 134
    v = np.array([-25.0, -20.0, 0.0, 1.0, 19.9, 20.0, 30.0])
    assert flow_to_uint8(v).tolist() == [0, 0, 128, 134, 254, 255, 255]


def _moving_square(tmp_path, frames=3, step=2, size=48):
    """Frame folder img_00001.jpg.. of a bright square moving ``step`` px right per frame."""
    import cv2

    folder = tmp_path / "clip"
    folder.mkdir()
    for i in range(frames):
        img = np.zeros((size, size, 3), np.uint8)
        img[16:32, 10 + step * i : 26 + step * i] = 255
        img = cv2.GaussianBlur(img, (7, 7), 2)
        cv2.imwrite(str(folder / f"img_{i + 1:05d}.jpg"), img)
    return folder


@pytest.mark.parametrize("method", ["farneback", "tvl1"])
def test_extract_writes_tsn_files_resumes_and_sees_the_direction(tmp_path, method):
    src = _moving_square(tmp_path)
    out = tmp_path / "flow"
    rec = extract_video(FlowJob(src, out, method))
    assert (rec["frames"], rec["flow"], rec["skipped"]) == (3, 2, False)
    names = sorted(p.name for p in out.iterdir())
    assert names == [
        "done.json",
        "flow_x_00001.jpg",
        "flow_x_00002.jpg",
        "flow_y_00001.jpg",
        "flow_y_00002.jpg",
    ]
    assert json.loads((out / "done.json").read_text())["method"] == method
    assert extract_video(FlowJob(src, out, method))["skipped"] is True
    assert count_flow(out) == 2
    f = read_flow(out, [0, 1]).astype(float)  # (2, H, W, 2)
    x, y = f[0, 18:30, 12:30, 0].mean(), f[0, 18:30, 12:30, 1].mean()
    assert x > 128 + 3 and abs(y - 128) < 3  # rightward: x above the zero level 128


def test_segment_starts_and_stacks_by_hand():
    # 15 flow fields, L=5: 11 starts in 3 segments, tick 11/3: int(tick/2 + tick*i) = 1, 5, 9
    # (official _get_test_indices with new_length 5)
    assert clip_indices(TestProtocol(), 15, 3, new_length=5).tolist() == [[1, 5, 9]]
    assert flow_stacks(np.array([9]), 5, 12).tolist() == [[9, 10, 11, 11, 11]]  # clamped


def test_flow_views_order_normalisation_and_mirror():
    fields = np.zeros((2, 2, 2, 2), np.uint8)  # (T*L, H, W, 2): T=1, L=2
    fields[0, ..., 0], fields[0, ..., 1], fields[1, ..., 0], fields[1, ..., 1] = 255, 0, 51, 102
    proto = TestProtocol(scale_size=2, crop_size=2)
    out = views_from_frames(
        lambda i: fields[i], np.array([[0]]), proto, "flow", np.array([[[0, 1]]])
    ).input
    want = [(v / 255 - 0.5) / 0.226 for v in (255, 0, 51, 102)]  # [x1, y1, x2, y2]
    assert out.shape == (1, 1, 4, 2, 2)
    assert torch.allclose(out[0, 0, :, 0, 0], torch.tensor(want), atol=1e-6)
    flipped = mirror(fields)  # x -> 255 - x, y unchanged
    assert flipped[..., 0].tolist() == (255 - fields[..., 0]).tolist()
    assert flipped[..., 1].tolist() == fields[..., 1].tolist()


def test_cross_modality_weight_by_hand():
    w = torch.tensor([1.0, 2.0, 6.0, -3.0, 0.0, 0.0]).view(2, 3, 1, 1)
    got = cross_modality_weight(w, 4)  # mean over RGB (3 and -1), replicated to 4 channels
    assert got.shape == (2, 4, 1, 1)
    assert got[:, :, 0, 0].tolist() == [[3.0] * 4, [-1.0] * 4]


def _tiny(in_channels=3, t=2):
    torch.manual_seed(0)
    return build_recognizer(
        "resnet18", 5, t, "offline", width=0.125, dropout=0.0, in_channels=in_channels
    ).eval()


def test_flow_recognizer_takes_2L_channels_and_rgb_transfer_initialises_conv1(tmp_path):
    from tsm_apps.train.config import load_config
    from tsm_apps.train.model import build_model

    rgb = _tiny()
    save_checkpoint(tmp_path / "rgb.pth", rgb)
    cfg = load_config(
        arch="resnet18",
        width=0.125,
        segments=2,
        modality="flow",
        new_length=5,
        pretrained=str(tmp_path / "rgb.pth"),
        dropout=0.0,
    )
    flow, fc_loaded = build_model(cfg, 5, torch.device("cpu"))
    assert fc_loaded  # same 5 classes: the RGB model's fc is kept
    w_rgb, w_flow = rgb.backbone.conv1.weight, flow.backbone.conv1.weight
    assert w_flow.shape == (8, 10, 7, 7)
    assert torch.equal(w_flow, w_rgb.mean(1, keepdim=True).expand(8, 10, 7, 7))
    assert torch.equal(flow.backbone.layer1[0].conv2.weight, rgb.backbone.layer1[0].conv2.weight)
    assert torch.equal(flow.fc.weight, rgb.fc.weight)
    assert flow.eval()(torch.randn(1, 2, 10, 32, 32)).shape == (1, 5)
    with pytest.raises(ValueError, match=r"\(N, T, 10, H, W\)"):
        flow(torch.randn(1, 2, 3, 32, 32))
    sd = rgb_to_flow_state(rgb.state_dict(), 10)
    assert torch.equal(sd["backbone.conv1.weight"], w_flow)


class RefFlowTSN(RefTSN):
    """Official ``TSN(modality='Flow', new_length=5)``: ``_construct_flow_model`` then input
    ``(N, T * 10, H, W)`` viewed as ``(-1, 10, H, W)``."""

    def __init__(self, arch, num_class, t, new_length=5):
        super().__init__(arch, num_class, t)
        conv = self.base_model.conv1
        new = nn.Conv2d(
            2 * new_length,
            conv.out_channels,
            conv.kernel_size,
            conv.stride,
            conv.padding,
            bias=False,
        )
        new.weight.data = (
            conv.weight.data.mean(dim=1, keepdim=True).expand(new.weight.shape).contiguous()
        )
        self.base_model.conv1, self.c = new, 2 * new_length

    def forward(self, x):  # (N, T * 10, H, W)
        out = self.new_fc(self.base_model(x.view(-1, self.c, *x.shape[-2:])))
        return out.view(-1, self.t, out.shape[-1]).mean(1)


def test_official_flow_checkpoint_gives_official_logits(tmp_path):
    torch.manual_seed(0)
    ref = randomize(RefFlowTSN("resnet18", 7, 4))
    name = "TSM_kinetics_Flow_resnet18_shift8_blockres_avg_segment4_e50.pth"
    sd = {"module." + k: v for k, v in ref.state_dict().items()}
    torch.save({"epoch": 50, "state_dict": sd}, tmp_path / name)
    model = load_checkpoint(tmp_path / name)
    assert (model.config.in_channels, model.config.num_segments) == (10, 4)
    x = torch.randn(2, 4, 10, 32, 32, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        diff = (model(x) - ref(x.reshape(2, 40, 32, 32))).abs().max().item()
    assert diff < 1e-5


def test_flow_dataset_gives_stacked_segments(tmp_path):
    from PIL import Image

    from tsm_apps.data.dataset import VideoDataset
    from tsm_apps.data.record import VideoSource

    out = tmp_path / "flow"
    extract_video(FlowJob(_moving_square(tmp_path, frames=6), out, "farneback"))
    recs = [VideoSource(out, count_flow(out), 1)]
    train = VideoDataset(recs, 2, "train", 32, modality="flow", new_length=2)
    x, y = train[0]
    assert x.shape == (2, 4, 32, 32) and y == 1
    val = VideoDataset(recs, 2, "val", 32, modality="flow", new_length=2)
    a, b = val[0][0], val[0][0]
    assert torch.equal(a, b)  # evaluation: segment middles, centre crop
    # 5 fields, L=2: 4 starts, tick 2: middles int(1 + 2 i) = 1, 3 -> fields [1, 2] and [3, 4];
    # each 8-bit x/y image resized by PIL to shorter side 32 * 256 // 224 = 36, crop 32 at 2
    fields = read_flow(out, [1, 2, 3, 4])  # (4, 48, 48, 2)
    chans = [
        np.asarray(Image.fromarray(f[..., c]).resize((36, 36), Image.BILINEAR))[2:34, 2:34]
        for f in fields
        for c in (0, 1)
    ]
    want = (torch.tensor(np.stack(chans), dtype=torch.float32) / 255 - 0.5) / 0.226
    assert torch.allclose(a, want.reshape(2, 4, 32, 32), atol=1e-6)
