import numpy as np
import pytest

from dissect.clips import _resize_crop, centre_indices, load_entries, resolve_data
from dissect.storage import clip_id


def test_centre_indices_are_segment_centres():
    assert centre_indices(16, 4).tolist() == [2, 6, 10, 14]
    assert centre_indices(10, 4).tolist() == [1, 3, 6, 8]      # tick 2.5: int(1.25 + 2.5 i)


def test_several_clips_per_video_take_offsets_inside_the_segments():
    # K=2 clips of T=4 in 16 frames: floor(16 * (i + (k + 0.5) / 2) / 4) = 4i + 1, 4i + 3
    assert centre_indices(16, 4, 0, 2).tolist() == [1, 5, 9, 13]
    assert centre_indices(16, 4, 1, 2).tolist() == [3, 7, 11, 15]


def test_list_parsing_names_file_and_line(tmp_path):
    (tmp_path / "videos").mkdir()
    for name in ("a.mp4", "b c.mp4"):
        (tmp_path / "videos" / name).write_bytes(b"")
    f = tmp_path / "val.txt"
    f.write_text("videos/a.mp4 16 2\n\n# comment\nvideos/b c.mp4 8 0\nvideos/a.mp4 0 1\n")
    with pytest.raises(ValueError, match=r"val.txt:5: expected 'path \[num_frames \[label\]\]'"):
        load_entries(str(f))
    f.write_text("videos/a.mp4 16 2\nvideos/b c.mp4 8\n")
    got = [(e.id, e.num_frames, e.label) for e in load_entries(str(tmp_path), clips=2)]
    assert got == [("videos__a__c0", 16, 2), ("videos__a__c1", 16, 2),
                   ("videos__b_c__c0", 8, None), ("videos__b_c__c1", 8, None)]
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
