"""Input forms of ``tsm dissect run`` / ``tsm test``: a video, folders (recursive), frame
folders, list files with optional fields, Something-Something-v2 JSON; checks name the file."""

import json
import shutil

import numpy as np
import pytest
from PIL import Image

from tools.sample_videos import sample_video
from tsm_apps.data.sources import find_sources, frame_folder_template, resolve_list

REAL = "carphone_pristine.mp4"  # 120 frames


def _frames(folder, n, name="img_{:05d}.jpg", start=1):
    folder.mkdir(parents=True)
    for i in range(n):
        Image.fromarray(np.full((8, 8, 3), i, np.uint8)).save(folder / name.format(start + i))
    return folder


def test_single_video_frame_count_from_the_decoder():
    (s,) = find_sources(sample_video(REAL))
    assert (s.name, s.num_frames, s.label) == (REAL, 120, None)


def test_folder_recursive_mixed_videos_and_frame_folders(tmp_path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    shutil.copyfile(sample_video(REAL), tmp_path / "a" / "b" / "clip.MP4")
    shutil.copyfile(sample_video(REAL), tmp_path / "clip_no_suffix")  # found by probing
    (tmp_path / "notes.txt").write_text("not a video")
    (tmp_path / "junk.bin").write_bytes(b"\0" * 100)
    _frames(tmp_path / "frames" / "v1", 5, "{:06d}.JPEG", start=0)
    got = [(s.name, s.num_frames, s.frame_template, s.start_index) for s in find_sources(tmp_path)]
    assert got == [
        ("a/b/clip.MP4", 120, None, 1),
        ("clip_no_suffix", 120, None, 1),
        ("frames/v1", 5, "{:06d}.JPEG", 0),
    ]


def test_a_frame_folder_itself_and_its_template(tmp_path):
    folder = _frames(tmp_path / "v", 3)
    assert frame_folder_template(folder) == ("img_{:05d}.jpg", 1)
    (s,) = find_sources(folder)
    assert (s.name, s.num_frames) == ("v", 3)


def test_list_file_with_optional_fields(tmp_path):
    _frames(tmp_path / "f", 4)
    shutil.copyfile(sample_video(REAL), tmp_path / "my video.mp4")
    lst = tmp_path / "any.txt"
    lst.write_text("# comment\nmy video.mp4\nf 4\n\nf 3 7\n")
    got = [(s.name, s.num_frames, s.label) for s in find_sources(lst)]
    assert got == [("my video.mp4", 120, None), ("f", 4, None), ("f", 3, 7)]
    lst.write_text("f 4\nmissing.mp4 10 1\n")
    with pytest.raises(FileNotFoundError, match=r"any.txt:2: video .*missing.mp4 not found"):
        find_sources(lst)
    lst.write_text("f 0 1\n")
    with pytest.raises(ValueError, match=r"any.txt:1: expected 'path \[num_frames \[label\]\]'"):
        find_sources(lst)


def test_ssv2_json_with_labels_beside_it(tmp_path):
    _frames(tmp_path / "17", 2)
    shutil.copyfile(sample_video(REAL), tmp_path / "42.webm")
    (tmp_path / "labels.json").write_text(
        json.dumps({"Holding something": "0", "Pushing something": "1"})
    )
    split = tmp_path / "validation.json"
    split.write_text(
        json.dumps(
            [
                {"id": "42", "template": "Pushing [something]"},
                {"id": "17", "template": "Holding [something]"},
            ]
        )
    )
    got = [(s.name, s.num_frames, s.label) for s in find_sources(split)]
    assert got == [("42.webm", 120, 1), ("17", 2, 0)]


def test_bad_inputs_are_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="data not found: .*nope"):
        find_sources(tmp_path / "nope")
    with pytest.raises(ValueError, match="no videos found"):
        find_sources(tmp_path)
    (tmp_path / "x.bin").write_bytes(b"garbage")
    with pytest.raises(ValueError, match="x.bin: not a video PyAV can read"):
        find_sources(tmp_path / "x.bin")
    (tmp_path / "broken.mp4").write_bytes(b"garbage")  # a single file: an error
    with pytest.raises(ValueError, match=r"cannot read .*broken.mp4: cannot open"):
        find_sources(tmp_path / "broken.mp4")
    shutil.copyfile(sample_video(REAL), tmp_path / "ok.mp4")  # in a folder: kept, with why
    got = {s.name: (s.num_frames, s.error) for s in find_sources(tmp_path)}
    assert got["ok.mp4"] == (120, None) and got["broken.mp4"][0] == 0
    assert got["broken.mp4"][1].startswith("cannot open")


def test_resolve_list_prefers_val_then_test_and_names_a_missing_path(tmp_path):
    assert resolve_list(tmp_path) == tmp_path  # no list: the folder itself
    (tmp_path / "test.txt").write_text("")
    assert resolve_list(tmp_path) == tmp_path / "test.txt"
    (tmp_path / "val.txt").write_text("")
    assert resolve_list(str(tmp_path)) == tmp_path / "val.txt"
    assert resolve_list(tmp_path / "test.txt") == tmp_path / "test.txt"
    with pytest.raises(FileNotFoundError, match=f"data not found: {tmp_path / 'gone'}"):
        resolve_list(tmp_path / "gone")
