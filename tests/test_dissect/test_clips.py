import numpy as np
import pytest

from dissect.clips import _resize_crop, read_list, resolve_data, centre_indices
from dissect.storage import clip_id


def test_centre_indices_are_segment_centres():
    assert centre_indices(16, 4).tolist() == [2, 6, 10, 14]
    assert centre_indices(10, 4).tolist() == [1, 3, 6, 8]      # tick 2.5: int(1.25 + 2.5 i)


def test_list_parsing_names_file_and_line(tmp_path):
    f = tmp_path / "val.txt"
    f.write_text("videos/a.mp4 16 2\n\n# comment\nvideos/b c.mp4 8 0\nbroken line\n")
    with pytest.raises(ValueError, match=r"val.txt:5: expected 'path num_frames label'"):
        read_list(f)
    f.write_text("videos/a.mp4 16 2\nvideos/b c.mp4 8 0\n")
    assert read_list(f) == [("videos/a.mp4", 16, 2), ("videos/b c.mp4", 8, 0)]
    assert resolve_data(str(tmp_path)) == (f, None)
    with pytest.raises(FileNotFoundError, match="data not found"):
        resolve_data(str(tmp_path / "nope.txt"))


def test_resize_and_centre_crop_geometry():
    frames = np.zeros((2, 40, 80, 3), np.uint8)
    x, scale, offset = _resize_crop(frames, 20)
    assert x.shape == (2, 3, 20, 20) and scale == 0.5 and offset == (10, 0)
    x, scale, offset = _resize_crop(frames, None)
    assert x.shape == (2, 3, 40, 80) and scale == 1.0 and offset == (0, 0)


def test_clip_ids_are_file_name_safe():
    assert clip_id("videos/val_00003.mp4") == "videos__val_00003"
    assert clip_id("/abs/dir with space/x.avi") == "abs__dir_with_space__x"
