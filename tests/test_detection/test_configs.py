"""The detection configs: the R-101 paper setup builds, the paper's TSN = TSM without the shift
and trained single-frame (in both single-frame pairs nothing else differs), the demo's TSN = TSM
without the shift and nothing else, and ``data_root`` re-points every dataset."""

from pathlib import Path

import pytest
from mmdet.registry import MODELS
from mmengine.config import Config
from mmengine.registry import init_default_scope

import detection  # noqa: F401
from detection.runner_config import apply_data_root, apply_img_scale

CONFIGS = Path(detection.__file__).parent / "configs"
PAPER = ("rfcn_r101_vid_tsm_online.py", "rfcn_r101_vid_tsn.py")
SYNTH = ("rfcn_synth_tsm.py", "rfcn_synth_tsn_single_frame.py")
DEMO = ("rfcn_synth_tsm.py", "rfcn_synth_tsn.py")


def load(name):
    return Config.fromfile(str(CONFIGS / name))


def without_shift(cfg):
    """The config without what TSN changes, and those values: the shift and the clip length
    (backbone, clip sampler, clip flip; the ``clip_len`` variable)."""
    d = cfg.to_dict()
    model = d["model"]
    flips = [a.pop("clip_len") for a in model["data_preprocessor"].get("batch_augments") or []]
    return d, (
        model["backbone"].pop("shift"),
        model["backbone"].pop("num_segments"),
        d["train_dataloader"]["batch_sampler"].pop("clip_len"),
        d.pop("clip_len"),
        flips,
    )


@pytest.mark.parametrize("pair", [PAPER, SYNTH])
def test_pair_differs_only_in_shift_and_single_frame_training(pair):
    (tsm, s_tsm), (tsn, s_tsn) = (without_shift(load(n)) for n in pair)
    flips = [[4], [1]] if pair == PAPER else [[], []]
    assert s_tsm == ("online", 4, 4, 4, flips[0]) and s_tsn == (None, 1, 1, 1, flips[1])
    assert tsm == tsn and tsm["model"]["loss_frames"] == "key"


def test_demo_pair_differs_only_in_shift():
    """``tsm demo``'s TSN trains on TSM's 4-frame clips with the key-frame loss: the same BN
    batches; only the shift is off."""
    (tsm, s_tsm), (tsn, s_tsn) = (without_shift(load(n)) for n in DEMO)
    assert s_tsm == ("online", 4, 4, 4, []) and s_tsn == (None, 4, 4, 4, [])
    assert tsm == tsn and tsn["model"]["loss_frames"] == "key"
    assert tsn["model"]["backbone"]["norm_eval"] is False
    assert tsn["model"]["backbone"]["frozen_stages"] == -1


def test_paper_config_is_the_msra_rfcn_with_fgfa_data_and_solver():
    cfg = load(PAPER[0])
    assert cfg.custom_imports == dict(imports=["detection"], allow_failed_imports=False)
    m = cfg.model
    b, head = m.backbone, m.roi_head.bbox_head
    assert (b.arch, b.strides, b.dilations, b.shift) == (
        "resnet101",
        (1, 2, 2, 1),
        (1, 1, 1, 2),
        "online",
    )
    assert (b.frozen_stages, b.norm_eval, b.frozen_bn_affine) == (1, True, True)
    assert m.neck == dict(
        type="RFCNSplitNeck", in_channels=2048, out_channels=1024, rpn_channels=512, dilation=6
    )
    assert (m.rpn_head.type, m.rpn_head.in_channels) == ("PlainRPNHead", 512)
    assert (head.num_classes, head.k, head.in_channels, head.mid_channels, head.pool_mode) == (
        30,
        7,
        512,
        None,
        "pool",
    )
    assert m.train_cfg.rcnn.sampler == dict(
        type="HardestRoISampler", num=128, add_gt_as_proposals=True
    )
    assert m.data_preprocessor.batch_augments == [
        dict(type="ClipHorizontalFlip", clip_len=b.num_segments, prob=0.5)
    ]
    resize = [t for t in cfg.test_dataloader.dataset.pipeline if t.type == "Resize"][0]
    assert resize.scale == (1000, 600) and resize.keep_ratio
    ds = cfg.train_dataloader.dataset
    assert (ds.ann_file, ds.det_ann_file) == (
        "ImageSets/VID_train_15frames.txt",
        "ImageSets/DET_train_30classes.txt",
    )
    assert cfg.test_dataloader.dataset.ann_file == "ImageSets/VID_val_videos.txt"
    assert cfg.train_dataloader.batch_sampler.clip_len == b.num_segments
    assert cfg.train_dataloader.batch_sampler.key_position == "end"
    # FGFA: lr 2.5e-4, wd 5e-4 on gradients summed over 4 GPUs = 1e-3, 1.25e-4 on their mean;
    # 2 epochs of (53,639 + 57,834) x 2 (mirrors) = 222,946 entries, 55,736 iterations each;
    # x0.1 after int(1.333 * 222,946 / 4) = int(74,296.75) (docs/recipes.md has the sources)
    assert cfg.optim_wrapper.optimizer == dict(
        type="SGD", lr=0.001, momentum=0.9, weight_decay=0.000125
    )
    assert cfg.optim_wrapper.clip_grad is None and len(cfg.param_scheduler) == 1
    assert cfg.train_cfg.max_iters == 111472
    assert cfg.param_scheduler[0].milestones == [74296]
    assert m.rpn_head.loss_bbox == dict(type="SmoothL1Loss", beta=1.0, loss_weight=1.0)


@pytest.mark.parametrize("name", PAPER)
def test_paper_model_builds(name):
    cfg = load(name)
    init_default_scope("mmdet")
    model = MODELS.build(cfg.model)
    assert type(model).__name__ == "ClipRFCN"
    assert model.backbone.out_channels == (2048,)
    n = sum(p.numel() for p in model.parameters())
    # ResNet-101 trunk 42,500,160 + 3x3 dilated conv 2048*1024*9+1024 + RPN 1x1 512*(18+36)+54
    # + R-FCN maps 512*49*(31+8)+49*39
    assert n == 42500160 + 18875392 + 27702 + 980343, n


def test_img_scale_follows_cfg_options():
    cfg = load(PAPER[0])
    options = {"img_scale": [256, 192]}
    cfg.merge_from_dict(options)
    apply_img_scale(cfg, options)
    for loader in ("train_dataloader", "test_dataloader"):
        resize = [t for t in cfg[loader].dataset.pipeline if t.type == "Resize"]
        assert [t.scale for t in resize] == [(256, 192)]


def test_data_root_follows_cfg_options():
    cfg = load(SYNTH[0])
    options = {"data_root": "/data/vid/"}
    cfg.merge_from_dict(options)
    apply_data_root(cfg, options)
    for loader in ("train_dataloader", "test_dataloader"):
        assert cfg[loader].dataset.data_root == "/data/vid/"
    assert cfg.val_dataloader is None  # no in-training validation (see the config)
    # an explicit per-dataset root wins
    cfg = load(SYNTH[0])
    options = {"data_root": "/a/", "test_dataloader.dataset.data_root": "/b/"}
    cfg.merge_from_dict(options)
    apply_data_root(cfg, options)
    assert cfg.train_dataloader.dataset.data_root == "/a/"
    assert cfg.test_dataloader.dataset.data_root == "/b/"


def test_data_root_reaches_wrapped_datasets():
    cfg = Config(
        dict(
            train_dataloader=dict(
                dataset=dict(
                    type="ConcatDataset",
                    datasets=[
                        dict(type="A", data_root="x"),
                        dict(type="RepeatDataset", times=2, dataset=dict(type="B", data_root="y")),
                    ],
                )
            )
        )
    )
    apply_data_root(cfg, {"data_root": "/r/"})
    ds = cfg.train_dataloader.dataset
    assert [ds.datasets[0].data_root, ds.datasets[1].dataset.data_root] == ["/r/", "/r/"]
    assert "data_root" not in ds
