import numpy as np
import pytest
from PIL import Image

from dissect.overlay import colorize, normalize_for_display, overlay, strip, write_gif


def test_normalisation_per_clip_and_per_frame():
    maps = np.array([[[0.0, 2.0]], [[4.0, 4.0]]])
    assert normalize_for_display(maps, "clip").tolist() == [[[0.0, 0.5]], [[1.0, 1.0]]]
    assert normalize_for_display(maps, "frame").tolist() == [[[0.0, 1.0]], [[0.0, 0.0]]]
    with pytest.raises(ValueError, match=r"\(T, H, W\)"):
        normalize_for_display(maps[0])


def test_colour_map_ends():
    assert colorize(np.array([0.0, 1.0])).tolist() == [[0, 0, 128], [128, 0, 0]]


def test_overlay_strip_and_gif(tmp_path):
    frames = np.zeros((3, 4, 5, 3), np.uint8)
    maps = np.random.default_rng(0).random((3, 4, 5))
    ov = overlay(frames, maps, boxes=np.array([[0, 0, 2, 2]] * 3))
    assert ov.shape == (3, 4, 5, 3) and ov.dtype == np.uint8
    assert ov[0, 0, 0].tolist() == [0, 255, 0]  # box outline
    assert strip(ov, gap=2).shape == (4, 3 * 5 + 2 * 2, 3)
    path = write_gif(tmp_path / "a.gif", ov)
    with Image.open(path) as im:
        assert im.n_frames == 3
