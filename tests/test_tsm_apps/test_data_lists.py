"""TSM list files and Something-Something-v2 JSON labels."""

import json
from pathlib import Path

import pytest

from tsm_apps.data.lists import (
    SSv2Record,
    read_ssv2,
    read_ssv2_labels,
    read_tsm_list,
    ssv2_class_name,
    ssv2_video_records,
    write_tsm_list,
)
from tsm_apps.data.record import VideoSource


def test_tsm_list_parses_paths_comments_and_roots(tmp_path):
    f = tmp_path / "train.txt"
    f.write_text("# a comment\nvideos/a.mp4 120 3\n\nmy clip/b 2 0\n/abs/c.mp4 64 17\n")
    recs = read_tsm_list(f)
    assert recs == [
        VideoSource(tmp_path / "videos/a.mp4", 120, 3),
        VideoSource(tmp_path / "my clip/b", 2, 0),
        VideoSource(Path("/abs/c.mp4"), 64, 17),
    ]
    assert read_tsm_list(f, root="/data")[0].path == Path("/data/videos/a.mp4")
    assert [r.num_frames for r in read_tsm_list(f, min_frames=3)] == [120, 64]


@pytest.mark.parametrize(
    "line, why",
    [
        ("a.mp4 12", "label', got 'a.mp4 12'"),
        ("a.mp4 twelve 3", "integer num_frames and label"),
        ("a.mp4 12 x", "integer num_frames and label"),
        ("a.mp4 0 3", "num_frames >= 1 and label >= 0"),
        ("a.mp4 5 -1", "num_frames >= 1 and label >= 0"),
    ],
)
def test_tsm_list_bad_line_names_file_and_line(tmp_path, line, why):
    f = tmp_path / "val.txt"
    f.write_text(f"ok.mp4 10 1\n# comment\n{line}\n")
    with pytest.raises(ValueError, match=rf"val.txt:3: expected .*{why}"):
        read_tsm_list(f)


def test_tsm_list_empty_and_missing(tmp_path):
    f = tmp_path / "empty.txt"
    f.write_text("\n# nothing\n")
    with pytest.raises(ValueError, match="empty.txt: no videos listed"):
        read_tsm_list(f)
    assert read_tsm_list(f, allow_empty=True) == []
    with pytest.raises(FileNotFoundError, match="missing.txt"):
        read_tsm_list(tmp_path / "missing.txt")


def test_write_tsm_list_round_trip(tmp_path, monkeypatch):
    recs = [VideoSource(tmp_path / "v" / "a.mp4", 16, 0), VideoSource(Path("/x/b.mp4"), 8, 5)]
    out = write_tsm_list(tmp_path / "lists" / "train.txt", recs, root=tmp_path)
    assert out.read_text() == "v/a.mp4 16 0\n/x/b.mp4 8 5\n"
    assert read_tsm_list(out, root=tmp_path) == recs
    assert [p.name for p in out.parent.iterdir()] == ["train.txt"]
    (tmp_path / "rel").mkdir()
    monkeypatch.chdir(tmp_path)  # a relative list folder still gets paths relative to it
    write_tsm_list("rel/val.txt", [VideoSource(tmp_path / "rel" / "v.mp4", 3, 1)])
    assert (tmp_path / "rel" / "val.txt").read_text() == "v.mp4 3 1\n"


def write_json(path, obj):
    path.write_text(json.dumps(obj))
    return path


def test_ssv2_labels_and_split(tmp_path):
    labels = write_json(
        tmp_path / "labels.json",
        {"Putting something on something": "0", "Moving something from left to right": "1"},
    )
    train = write_json(
        tmp_path / "train.json",
        [
            {
                "id": "78687",
                "label": "putting pen on book",
                "template": "Putting [something] on [something]",
                "placeholders": ["pen", "book"],
            },
            {
                "id": "42",
                "label": "moving cup from left to right",
                "template": "Moving [something] from left to right",
                "placeholders": ["cup"],
            },
        ],
    )
    assert read_ssv2_labels(labels) == {
        "Putting something on something": 0,
        "Moving something from left to right": 1,
    }
    recs = read_ssv2(train, labels, root=tmp_path / "videos")
    assert recs == [
        SSv2Record(
            "78687",
            tmp_path / "videos/78687.webm",
            0,
            "Putting [something] on [something]",
            ("pen", "book"),
        ),
        SSv2Record(
            "42", tmp_path / "videos/42.webm", 1, "Moving [something] from left to right", ("cup",)
        ),
    ]
    test = write_json(tmp_path / "test.json", [{"id": "7"}])
    assert read_ssv2(test, read_ssv2_labels(labels), video_template="{}/")[0] == SSv2Record(
        "7", tmp_path / "7", None, None, ()
    )
    assert ssv2_video_records(recs, frame_counter=lambda p: len(p.name)) == [
        VideoSource(tmp_path / "videos/78687.webm", 10, 0),
        VideoSource(tmp_path / "videos/42.webm", 7, 1),
    ]
    with pytest.raises(ValueError, match="SSv2 video 7 .* has no label"):
        ssv2_video_records(read_ssv2(test, labels), frame_counter=len)
    assert (
        ssv2_class_name("Pushing [something] so that it falls")
        == "Pushing something so that it falls"
    )


def test_ssv2_errors_name_file_and_entry(tmp_path):
    labels = {"Putting something on something": 0}
    bad = write_json(
        tmp_path / "validation.json",
        [
            {"id": "1", "template": "Putting [something] on [something]"},
            {"id": "2", "template": "Tearing [something]"},
        ],
    )
    with pytest.raises(ValueError, match=r"validation.json: entry 1 \(id 2\): class 'Tearing "):
        read_ssv2(bad, labels)
    broken = tmp_path / "broken.json"
    broken.write_text('[\n{"id": "1",\n')
    with pytest.raises(ValueError, match=r"broken.json:\d+: not valid JSON"):
        read_ssv2(broken, labels)
    no_id = write_json(tmp_path / "noid.json", [{"template": "x"}])
    with pytest.raises(ValueError, match="noid.json: entry 0 has no 'id'"):
        read_ssv2(no_id, labels)
    bad_labels = write_json(tmp_path / "labels.json", {"a": "zero"})
    with pytest.raises(ValueError, match="labels.json: every class id must be an integer"):
        read_ssv2_labels(bad_labels)
