"""The official TSM repository's checkpoint file names read into recognizer settings
(``tsm_apps.checkpoint.identity.parse_official_name``): architecture, shift, fold, place,
segments, non-local and temporal pooling, as the official ``main.py`` writes them."""

import pytest

from tsm_apps.checkpoint.identity import parse_official_name


@pytest.mark.parametrize(
    "name,expected",
    [
        (
            "TSM_kinetics_RGB_resnet50_shift8_blockres_avg_segment8_e50.pth",
            dict(
                arch="resnet50",
                shift="offline",
                fold_div=8,
                place="blockres",
                num_segments=8,
                non_local=False,
                temporal_pool=False,
            ),
        ),
        (
            "TSM_something_RGB_resnet50_shift8_blockres_avg_segment8_e45.pth",
            dict(
                arch="resnet50",
                shift="offline",
                fold_div=8,
                place="blockres",
                num_segments=8,
                non_local=False,
                temporal_pool=False,
            ),
        ),
        (
            "TSM_kinetics_RGB_resnet50_shift8_blockres_avg_segment8_e100_dense_nl.pth",
            dict(
                arch="resnet50",
                shift="offline",
                fold_div=8,
                place="blockres",
                num_segments=8,
                non_local=True,
                temporal_pool=False,
            ),
        ),
        (
            "TSM_kinetics_RGB_mobilenetv2_shift8_blockres_avg_segment8_e100_dense.pth",
            dict(
                arch="mobilenetv2",
                shift="offline",
                fold_div=8,
                place="blockres",
                num_segments=8,
                non_local=False,
                temporal_pool=False,
            ),
        ),
        (
            "TSM_kinetics_RGB_resnet50_shift4_block_tpool_avg_segment16_e50.pth.tar",
            dict(
                arch="resnet50",
                shift="offline",
                fold_div=4,
                place="block",
                num_segments=16,
                non_local=False,
                temporal_pool=True,
            ),
        ),
        (
            "TSM_kinetics_RGB_resnet50_avg_segment5_e50.pth",
            dict(arch="resnet50", shift=None, num_segments=5, non_local=False, temporal_pool=False),
        ),
        ("ckpt.best.pth.tar", {}),
    ],
)
def test_parse_official_name(name, expected):
    assert parse_official_name(name) == expected


def test_parse_official_name_refuses_rgbdiff():  # Flow loads: tests/test_tsm_apps/test_flow.py
    with pytest.raises(ValueError, match="RGBDiff"):
        parse_official_name("TSM_kinetics_RGBDiff_resnet50_shift8_blockres_avg_segment8_e50.pth")
