from pathlib import Path

import numpy as np
import pytest

from dissect.clips import ClipEntry, clip_frames, load_entries, resolve_data
from dissect.storage import clip_id
from tsm_apps.data.pipeline import views_from_frames
from tsm_apps.data.protocol import TestProtocol
from tsm_apps.data.record import VideoSource


def entry(num_frames, clip=0, num_clips=1):
    return ClipEntry("v", VideoSource(Path("v.mp4"), num_frames), clip=clip, num_clips=num_clips)


def test_clip_frames_are_the_protocols_segment_centres():
    assert clip_frames(entry(16), 4, TestProtocol()).tolist() == [2, 6, 10, 14]
    assert clip_frames(entry(10), 4, TestProtocol()).tolist() == [1, 3, 6, 8]  # int(1.25 + 2.5i)


def test_several_clips_per_video_take_offsets_inside_the_segments():
    # K=2 clips of T=4 in 16 frames: floor(16 * (i + (k + 0.5) / 2) / 4) = 4i + 1, 4i + 3
    assert clip_frames(entry(16, 0, 2), 4, TestProtocol()).tolist() == [1, 5, 9, 13]
    assert clip_frames(entry(16, 1, 2), 4, TestProtocol()).tolist() == [3, 7, 11, 15]
    # dense: window 64, stride 16; 100 frames: starts linspace(0, 36, 2) = 0, 36
    dense = TestProtocol(sampling="dense", clips=2)
    assert clip_frames(entry(100, 1, 2), 4, dense).tolist() == [36, 52, 68, 84]


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
    assert got == [
        ("videos__a__c0", 16, 2),
        ("videos__a__c1", 16, 2),
        ("videos__b_c__c0", 8, None),
        ("videos__b_c__c1", 8, None),
    ]
    assert resolve_data(str(tmp_path)) == (f, None)
    with pytest.raises(FileNotFoundError, match="data not found"):
        resolve_data(str(tmp_path / "nope.txt"))


def test_boxes_follow_the_resize_and_the_crop():
    # a 40x80 frame at shorter side 20 is 20x40; the centre 20x20 view is x 20..60 of the frame
    frames = np.zeros((1, 40, 80, 3), np.uint8)
    views = views_from_frames(
        lambda i: frames[i], np.zeros((1, 1), np.int64), TestProtocol(scale_size=20, crop_size=20)
    )
    np.testing.assert_allclose(views.boxes, [[20.0, 0.0, 60.0, 40.0]])
    boxes = np.array([[20.0, 0.0, 60.0, 40.0], [30.0, 10.0, 40.0, 30.0]])
    np.testing.assert_allclose(views.to_input(boxes), [[0, 0, 20, 20], [5, 5, 10, 15]])
    # the same view in the frame held at half size (20x40): x 10..30, y 0..20
    np.testing.assert_allclose(views.box_in((20, 40)), (10.0, 0.0, 30.0, 20.0))


def test_clip_ids_are_file_name_safe():
    assert clip_id("videos/val_00003.mp4") == "videos__val_00003"
    assert clip_id("/abs/dir with space/x.avi") == "abs__dir_with_space__x"
