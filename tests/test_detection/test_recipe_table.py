"""The detection paper configs against their rows of docs/recipes.md (tools/recipe_table.py):
every listed hyper-parameter resolves to the table's value (the reference, or the stated
deviation); a changed value on either side is reported."""

import copy
import dataclasses
from pathlib import Path

import pytest
from mmdet.registry import MODELS
from mmengine.config import Config
from mmengine.registry import init_default_scope

import detection
from tools.recipe_table import drift, read_table

CONFIGS = Path(detection.__file__).parent / "configs"
TSM = "detection/configs/rfcn_r101_vid_tsm_online.py"
TSN = "detection/configs/rfcn_r101_vid_tsn.py"


def resolved(section: str) -> dict:
    """The config as mmengine resolves it (the schedule from the real list sizes, as the file
    computes it), plus ``built``: the R-FCN head built from it (attributes the dict lacks)."""
    cfg = Config.fromfile(str(CONFIGS / Path(section).name)).to_dict()
    init_default_scope("mmdet")
    cfg["built"] = {"bbox_head": MODELS.build(cfg["model"]["roi_head"]["bbox_head"])}
    return cfg


def rows(section: str) -> list:
    table = read_table()
    if section == TSM:
        return table[TSM]
    merged = {r.parameter: r for r in table[TSM]}  # TSN: the TSM rows, its own on top
    merged.update({r.parameter: r for r in table[section]})
    return list(merged.values())


@pytest.fixture(scope="module")
def configs():
    return {s: resolved(s) for s in (TSM, TSN)}


def test_the_table_lists_the_paper_recipe():
    table = read_table()
    assert len(table[TSM]) >= 80 and [r.parameter for r in table[TSN]] == [
        "model.backbone.shift",
        "model.backbone.num_segments",
        "train_dataloader.batch_sampler.clip_len",
    ]
    params = {r.parameter for r in table[TSM]}
    assert {
        "train_cfg.max_iters",
        "param_scheduler.0.milestones",
        "optim_wrapper.optimizer.weight_decay",
        "model.rpn_head.loss_bbox.beta",
        "train_dataloader.batch_sampler.key_position",
        "train_dataloader.dataset.clip_boxes",
        "model.loss_frames",
        "test_dataloader.dataset.clip_boxes",
        "model.train_cfg.rcnn.sampler.num",
    } <= params
    # the deliberate deviations, each with its reason
    assert sorted(r.parameter for r in table[TSM] if r.deviates) == sorted(
        [
            "model.backbone.num_segments",
            "train_dataloader.batch_sampler.clip_len",
            "model.data_preprocessor.mean",
            "model.data_preprocessor.std",
            "model.data_preprocessor.pad_size_divisor",
            "optim_wrapper.optimizer.lr",
            "optim_wrapper.optimizer.weight_decay",
        ]
    )


@pytest.mark.parametrize("section", [TSM, TSN])
def test_paper_configs_follow_the_table(configs, section):
    assert drift(rows(section), configs[section]) == []


def test_resolved_schedule_and_solver(configs):
    cfg = configs[TSM]
    assert cfg["train_cfg"]["max_iters"] == 111472
    assert cfg["param_scheduler"][0]["milestones"] == [74296]
    opt = cfg["optim_wrapper"]["optimizer"]
    assert (opt["lr"], opt["weight_decay"]) == (pytest.approx(1e-3), pytest.approx(1.25e-4))
    assert cfg["solver"]["batch"] == 4


def test_a_changed_config_value_is_reported(configs):
    cfg = copy.deepcopy(configs[TSM])
    cfg["optim_wrapper"]["optimizer"]["weight_decay"] = 0.0005
    cfg["model"]["rpn_head"]["loss_bbox"]["beta"] = 1.0 / 9.0
    bad = drift(rows(TSM), cfg)
    assert len(bad) == 2  # in table order
    assert "model.rpn_head.loss_bbox.beta = 0.111" in bad[0] and "the table says 1.0" in bad[0]
    assert "optim_wrapper.optimizer.weight_decay = 0.0005, the table says 0.000125" in bad[1]
    del cfg["train_dataloader"]["dataset"]["clip_boxes"]
    assert any(
        "train_dataloader.dataset.clip_boxes: no key 'clip_boxes'" in b
        for b in drift(rows(TSM), cfg)
    )


def test_a_changed_table_value_is_reported(configs):
    table = rows(TSM)
    i = next(k for k, r in enumerate(table) if r.parameter == "train_cfg.max_iters")
    table[i] = dataclasses.replace(table[i], reference=55737, ours=55737)
    bad = drift(table, configs[TSM])
    assert len(bad) == 1 and "train_cfg.max_iters = 111472, the table says 55737" in bad[0]
