"""Box drawing and the bounded result store."""

from __future__ import annotations

import numpy as np
import pytest

from ui.app.cache import ResultStore
from ui.app.widgets.draw import draw_boxes, upscale


def test_draw_boxes_outlines_in_colour():
    frame = np.zeros((40, 60, 3), np.uint8)
    out = draw_boxes(frame, np.array([[10, 20, 30, 35]]), [""], color=(255, 0, 0), width=1)
    assert out[20, 15].tolist() == [255, 0, 0] and out[35, 15].tolist() == [255, 0, 0]
    assert out[27, 10].tolist() == [255, 0, 0] and out[27, 20].tolist() == [0, 0, 0]
    assert frame.max() == 0  # input untouched
    with pytest.raises(ValueError, match="1 boxes but 2 captions"):
        draw_boxes(frame, np.zeros((1, 4)), ["a", "b"])
    with pytest.raises(ValueError, match=r"uint8 \(H, W, 3\) RGB, got float32 \(4, 4\)"):
        draw_boxes(np.zeros((4, 4), np.float32), np.zeros((0, 4)), [])


def test_upscale_integer_factor():
    frame = np.arange(2 * 3 * 3, dtype=np.uint8).reshape(2, 3, 3)
    big = upscale(frame, 7)
    assert big.shape == (6, 9, 3) and (big[::3, ::3] == frame).all()
    assert upscale(frame, 3) is frame


def test_result_store_computes_once_and_evicts_oldest():
    store, calls = ResultStore(capacity=2), []

    def make(k):
        return lambda: calls.append(k) or k * 10

    assert store.get_or_compute(1, make(1)) == 10
    assert store.get_or_compute(1, make(1)) == 10
    store.get_or_compute(2, make(2))
    store.get_or_compute(1, make(1))  # 1 is now most recent
    store.get_or_compute(3, make(3))  # evicts 2
    assert calls == [1, 2, 3] and 2 not in store and 1 in store and len(store) == 2


def test_shown_is_one_jpeg_at_the_shown_width():
    """What the page gets: a JPEG scaled down to the shown width (aspect kept), never up."""
    import io

    from PIL import Image

    from ui.app.widgets.draw import shown

    frame = np.zeros((64, 128, 3), np.uint8)
    frame[:] = (10, 200, 30)
    data = shown(frame, 32)
    img = Image.open(io.BytesIO(data))
    assert (img.format, img.size) == ("JPEG", (32, 16))
    assert np.abs(np.asarray(img).astype(int) - (10, 200, 30)).max() <= 4
    assert Image.open(io.BytesIO(shown(frame, 500))).size == (128, 64)
    with pytest.raises(ValueError, match=r"uint8 \(H, W, 3\)"):
        shown(frame[..., 0], 32)
