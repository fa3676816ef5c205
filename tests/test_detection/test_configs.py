"""The detection configs: the R-101 paper setup builds, TSN = TSM without the shift, the
synthetic pair differs only in the shift, and ``data_root`` re-points every dataset."""
from pathlib import Path

import pytest
from mmdet.registry import MODELS
from mmengine.config import Config
from mmengine.registry import init_default_scope

import detection  # noqa: F401
from detection.cli import apply_data_root

CONFIGS = Path(detection.__file__).parent / "configs"
PAPER = ("rfcn_r101_vid_tsm_online.py", "rfcn_r101_vid_tsn.py")
SYNTH = ("rfcn_synth_tsm.py", "rfcn_synth_tsn.py")


def load(name):
    return Config.fromfile(str(CONFIGS / name))


def without_shift(cfg):
    d = cfg.to_dict()
    shift = d["model"]["backbone"].pop("shift")
    return d, shift


@pytest.mark.parametrize("pair", [PAPER, SYNTH])
def test_pair_differs_only_in_shift(pair):
    (tsm, s_tsm), (tsn, s_tsn) = (without_shift(load(n)) for n in pair)
    assert (s_tsm, s_tsn) == ("online", None)
    assert tsm == tsn


def test_paper_config_is_the_paper_setup():
    cfg = load(PAPER[0])
    assert cfg.custom_imports == dict(imports=["detection"], allow_failed_imports=False)
    b, head = cfg.model.backbone, cfg.model.roi_head.bbox_head
    assert (b.arch, b.strides, b.dilations, b.shift) == ("resnet101", (1, 2, 2, 1),
                                                         (1, 1, 1, 2), "online")
    assert (head.num_classes, head.k) == (30, 7)
    assert cfg.model.train_cfg.rcnn.sampler == dict(type="HardestRoISampler", num=128,
                                                    add_gt_as_proposals=True)
    resize = [t for t in cfg.test_dataloader.dataset.pipeline if t.type == "Resize"][0]
    assert resize.scale == (1000, 600) and resize.keep_ratio
    ds = cfg.train_dataloader.dataset
    assert ds.det_ann_file and ds.frames_per_video == 15
    assert cfg.train_dataloader.batch_sampler.clip_len == b.num_segments
    assert cfg.optim_wrapper.optimizer.type == "SGD"


@pytest.mark.parametrize("name", PAPER)
def test_paper_model_builds(name):
    cfg = load(name)
    init_default_scope("mmdet")
    model = MODELS.build(cfg.model)
    assert type(model).__name__ == "ClipRFCN"
    assert model.backbone.out_channels == (1024, 2048)
    n = sum(p.numel() for p in model.parameters())
    assert 45e6 < n < 80e6, n  # ResNet-101 trunk (42.5M) + RPN + R-FCN head


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
    cfg = Config(dict(train_dataloader=dict(dataset=dict(
        type="ConcatDataset", datasets=[dict(type="A", data_root="x"), dict(
            type="RepeatDataset", times=2, dataset=dict(type="B", data_root="y"))]))))
    apply_data_root(cfg, {"data_root": "/r/"})
    ds = cfg.train_dataloader.dataset
    assert [ds.datasets[0].data_root, ds.datasets[1].dataset.data_root] == ["/r/", "/r/"]
    assert "data_root" not in ds
