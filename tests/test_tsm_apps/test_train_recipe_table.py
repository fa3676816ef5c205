"""The recognition presets against their rows of docs/recipes.md (tools/recipe_table.py): every
value a preset sets is a row, every row resolves to the table's value (the reference, or the
stated deviation), and a changed value on either side is reported."""

import copy
import dataclasses

import pytest

from tools.recipe_table import drift, read_table
from tsm_apps.train.config import load_config
from tsm_apps.train.presets import PRESETS

REFERENCE_PRESETS = ("kinetics", "official", "official-flow", "aavg", "multigrid")


def resolved(preset: str) -> dict:
    """``asdict`` of the resolved preset, plus the test protocol its checkpoints record."""
    cfg = load_config(preset=preset)
    return dict(dataclasses.asdict(cfg), test_protocol=cfg.test_protocol().to_dict())


def keys(d: dict, prefix: str = "") -> set:
    """Dotted names of the leaves a preset sets (nested sections such as ``multigrid.steps``)."""
    out = set()
    for k, v in d.items():
        out |= keys(v, f"{prefix}{k}.") if isinstance(v, dict) else {prefix + k}
    return out


@pytest.fixture(scope="module")
def table():
    return read_table()


def test_every_reference_preset_has_its_section(table):
    assert {f"preset {p}" for p in REFERENCE_PRESETS} <= set(table)
    assert set(REFERENCE_PRESETS) == set(PRESETS) - {"synthetic"}  # the demo's own, no reference


@pytest.mark.parametrize("preset", REFERENCE_PRESETS)
def test_each_value_a_preset_sets_is_a_row(table, preset):
    rows = {r.parameter for r in table[f"preset {preset}"]}
    assert keys(PRESETS[preset]) <= rows, sorted(keys(PRESETS[preset]) - rows)


@pytest.mark.parametrize("preset", REFERENCE_PRESETS)
def test_presets_follow_the_table(table, preset):
    assert drift(table[f"preset {preset}"], resolved(preset)) == []


def test_the_deliberate_deviations(table):
    dev = {
        p: sorted(r.parameter for r in table[f"preset {p}"] if r.deviates)
        for p in REFERENCE_PRESETS
    }
    assert dev == {
        "kinetics": ["model.pretrained", "optim.bn", "optim.clip_grad", "optim.fc_lr_mult"],
        "official": ["model.pretrained"],
        "official-flow": [
            "model.dropout",
            "model.pretrained",
            "optim.batch_size",
            "optim.bn",
            "optim.clip_grad",
            "optim.lr_per_8",
            "optim.lr_steps",
            "optim.weight_decay",
        ],
        "aavg": ["optim.lr_per_8"],
        "multigrid": ["data.crop", "model.fold_div", "model.segments", "model.shift"],
    }


def test_the_recorded_test_protocols_are_the_references():
    kin, off = resolved("kinetics")["test_protocol"], resolved("official")["test_protocol"]
    # the official _dense test (README: --test_crops=3 --dense_sample --full_res): 10 clips
    assert (kin["sampling"], kin["clips"], kin["crops"], kin["scale_size"], kin["crop_size"]) == (
        "dense",
        10,
        3,
        256,
        256,
    )
    # scripts/test_tsm_kinetics_rgb_8f.sh: GroupScale(256), GroupCenterCrop(224), one clip
    assert (off["sampling"], off["clips"], off["crops"], off["scale_size"], off["crop_size"]) == (
        "tsn",
        1,
        1,
        256,
        224,
    )


def test_a_changed_value_is_reported_on_either_side(table):
    rows = table["preset official"]
    cfg = copy.deepcopy(resolved("official"))
    cfg["optim"]["lr_steps"] = [30, 40]
    cfg["test_protocol"]["crop_size"] = 256
    bad = drift(rows, cfg)
    assert len(bad) == 2
    assert (
        "official: optim.lr_steps = [30, 40], the table says [20, 40] (reference [20, 40], "
        "sh:4 [--lr_steps = 20, 40])" in bad[0]
    )
    assert "test_protocol.crop_size = 256, the table says 224" in bad[1]
    edited = [
        dataclasses.replace(r, ours=0.0) if r.parameter == "optim.weight_decay" else r
        for r in table["preset multigrid"]
    ]
    assert [b.split(": ", 1)[1] for b in drift(edited, resolved("multigrid"))] == [
        "optim.weight_decay = 0.0001, the table says 0.0 (reference 0.0001, "
        "yaml:47 [WEIGHT_DECAY = 0.0001])"
    ]
    del cfg["optim"]["nesterov"]
    assert any("optim.nesterov: no key 'nesterov'" in b for b in drift(rows, cfg))
