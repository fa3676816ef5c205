"""The synthetic ImageNet-VID: layout and XML read back, the held-out test split, motion classes,
objects blurred along their motion, corruptions sidecar, determinism, atomic output, CLI. Small
frames, few snippets."""

import json

import numpy as np
import pytest
from PIL import Image

from tsm_apps.data.motion import count_motion_classes, snippet_motion_iou
from tsm_apps.data.vid_image_sets import read_image_set, read_list
from tsm_apps.data.vid_layout import NAME_TO_WNID, read_frame_xml
from tsm_apps.synth import vid as synth_vid
from tsm_apps.synth import vid_snippets as synth_snippets
from tsm_apps.synth.cli import main as synth_main
from tsm_apps.synth.vid_corruptions import KINDS
from tsm_apps.synth.vid_objects import draw_object, paste_moving_object

ARGS = dict(train_videos=3, val_videos=3, frames=24, width=96, height=80)


@pytest.fixture(scope="module")
def vid(tmp_path_factory):
    return synth_vid.generate(tmp_path_factory.mktemp("v") / "vid", seed=0, **ARGS)


def _snippets(root, split):
    return sorted(
        {
            e.rsplit("/", 1)[0]
            for e, _ in read_image_set(root / "ImageSets" / "VID" / f"{split}.txt")
        }
    )


def _frames(root, split, snippet):
    ann = root / "Annotations" / "VID" / split / snippet
    return [read_frame_xml(ann / f"{t:06d}.xml") for t in range(ARGS["frames"])]


def test_layout_and_xml_read_back(vid):
    sets = vid / "ImageSets" / "VID"
    assert len(list(sets.glob("train_*.txt"))) == 30
    assert len(_snippets(vid, "train")) == 3 and len(_snippets(vid, "val")) == 3
    assert read_image_set(sets / "val.txt")[0] == ("ILSVRC2015_val_00000000/000000", 1)
    wnids = {NAME_TO_WNID[c] for c in synth_snippets.CLASSES}
    seen = set()
    for split in ("train", "val", "test"):
        for snippet in _snippets(vid, split):
            for t, frame in enumerate(_frames(vid, split, snippet)):
                assert (frame.folder, frame.filename) == (snippet, f"{t:06d}")
                assert (frame.width, frame.height) == (96, 80)
                img = Image.open(vid / "Data" / "VID" / split / snippet / f"{t:06d}.JPEG")
                assert img.size == (96, 80)
                assert 1 <= len(frame.objects) <= (3 if split == "train" else 4)  # + one-frame
                for obj in frame.objects:
                    assert obj.name in wnids and obj.generated == 0
                    seen.add(obj.name)
    assert seen == wnids  # all four classes, with their real WordNet ids
    train_1 = read_image_set(sets / "train_1.txt")  # airplane
    assert all(n == 1 for _, n in train_1)


def test_msra_lists_and_det_part_in_the_real_layout(vid):
    sets = vid / "ImageSets"
    train = read_list(sets / "VID_train_15frames.txt")
    keys = [f for e, n, f, length in train if e == "train/" + _snippets(vid, "train")[0]]
    assert keys == [0, 2, 4, 5, 7, 8, 10, 12, 13, 15, 16, 18, 20, 21, 23]  # floor(24(2i+1)/30)
    assert len(train) == 3 * 15 and {(n, length) for _, n, _, length in train} == {(1, 24)}
    assert read_list(sets / "VID_val_videos.txt") == [
        (f"val/{s}", 1 + 24 * i, 0, 24) for i, s in enumerate(_snippets(vid, "val"))
    ]
    assert read_list(sets / "VID_test_videos.txt") == [
        (f"test/{s}", 1 + 24 * i, 0, 24) for i, s in enumerate(_snippets(vid, "test"))
    ]
    det = read_list(sets / "DET_train_30classes.txt")
    assert len(det) == 12 and all(
        e.startswith("train/ILSVRC2013_train/n") and n == 1 for e, n in det
    )
    names, empty = [], 0
    for entry, _ in det:
        rel = entry[len("train/") :]
        synset = rel.split("/")[1]
        assert rel.split("/")[2].startswith(synset + "_")
        Image.open(vid / "Data" / "DET" / "train" / f"{rel}.JPEG").verify()
        xml = vid / "Annotations" / "DET" / "train" / f"{rel}.xml"
        raw = [n.split("</name>")[0] for n in xml.read_text().split("<name>")[1:]]
        names += raw
        empty += not raw
        kept = read_frame_xml(xml, det=True).objects  # non-VID classes dropped
        assert [o.name for o in kept] == [n for n in raw if n in NAME_TO_WNID.values()]
    assert empty == 3 and {"n01440764", "n04254680"} <= set(names)


def test_the_test_split_is_held_out_apart_from_val(vid):
    assert _snippets(vid, "test") == [f"ILSVRC2015_test_{i:08d}" for i in range(3)]
    assert read_image_set(vid / "ImageSets" / "VID" / "test.txt")[25] == (
        "ILSVRC2015_test_00000001/000001",
        26,
    )
    for i in range(3):  # its own random stream: other tracks, other frames than val's
        val, test = (_frames(vid, s, _snippets(vid, s)[i]) for s in ("val", "test"))
        assert [o.box for o in val[0].objects] != [o.box for o in test[0].objects]
    summary = json.loads((vid / "synth.json").read_text())
    assert summary["test_videos"] == 3 and summary["motion_blur"] == synth_snippets.MOTION_BLUR


@pytest.mark.parametrize("split", ["val", "test"])
def test_one_frame_val_objects(vid, split):
    for i, snippet in enumerate(_snippets(vid, split)):
        frames = _frames(vid, split, snippet)
        seen = {}
        for t, frame in enumerate(frames):
            for o in frame.objects:
                seen.setdefault(o.trackid, []).append(t)
        single = [tid for tid, ts in seen.items() if len(ts) == 1]
        assert len(single) == (1 if i % 2 == 0 else 0), (snippet, seen)
        if single:
            t = seen[single[0]][0]
            j = [o.trackid for o in frames[t].objects].index(single[0])
            assert snippet_motion_iou(frames)[t][j] == 0.0  # no neighbour: FGFA's "fast"


def test_all_motion_classes_present(vid):
    values = []
    for split in ("train", "val", "test"):
        for snippet in _snippets(vid, split):
            values.append(snippet_motion_iou(_frames(vid, split, snippet)))
    counts = count_motion_classes(values)
    assert all(counts[c] > 0 for c in ("slow", "medium", "fast")), counts
    summary = json.loads((vid / "synth.json").read_text())["motion_classes"]
    assert {c: sum(summary[s][c] for s in ("train", "val", "test")) for c in counts} == counts


def test_speed_for_hits_the_target_motion_iou():
    for target in (0.95, 0.8, 0.5):
        v = synth_snippets.speed_for(40, 20, 0.3, target)
        iou = np.mean(
            [
                synth_snippets._shift_iou(40, 20, v * k * np.cos(0.3), v * k * np.sin(0.3))
                for k in range(1, 11)
            ]
        )
        assert abs(iou - target) < 1e-6


def test_corruptions_sidecar_matches_frames(vid):
    side = json.loads((vid / "corruptions.json").read_text())
    assert set(side) == {"train", "val", "test"}
    occluded_frames = 0
    for split in ("train", "val", "test"):
        assert sorted(side[split]) == _snippets(vid, split)
        for i, snippet in enumerate(_snippets(vid, split)):
            marks = {int(f): k for f, k in side[split][snippet].items()}
            # two of the three kinds per snippet, rotating with the snippet index
            assert set(marks.values()) == {KINDS[i % 3], KINDS[(i + 1) % 3]}
            frames = _frames(vid, split, snippet)
            for t, frame in enumerate(frames):
                if any(o.occluded for o in frame.objects):
                    assert marks.get(t) == "occlusion"
                    occluded_frames += 1
            data = vid / "Data" / "VID" / split / snippet
            mean = [
                np.asarray(Image.open(data / f"{t:06d}.JPEG"), float).mean()
                for t in range(len(frames))
            ]
            clean = [mean[t] for t in range(len(frames)) if t not in marks]
            for t, kind in marks.items():
                if kind == "glare":  # a flash brightens the frame
                    assert mean[t] > max(clean) + 5
    assert occluded_frames > 0


def test_deterministic_and_atomic(vid, tmp_path):
    again = synth_vid.generate(tmp_path / "again", seed=0, **ARGS)
    files = sorted(p.relative_to(vid) for p in vid.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(again) for p in again.rglob("*") if p.is_file())
    for rel in files:
        assert (again / rel).read_bytes() == (vid / rel).read_bytes(), rel
    assert [p.name for p in tmp_path.iterdir()] == ["again"]  # no partial folder left
    other = synth_vid.generate(tmp_path / "other", seed=1, **ARGS)
    assert (other / "corruptions.json").read_bytes() != (vid / "corruptions.json").read_bytes()
    stamp = (again / "synth.json").stat().st_mtime_ns
    assert synth_vid.generate(again, seed=0, **ARGS) == again  # same parameters: kept
    assert (again / "synth.json").stat().st_mtime_ns == stamp
    with pytest.raises(ValueError, match="other parameters"):
        synth_vid.generate(again, seed=2, **ARGS)


def test_cli(tmp_path, capsys):
    assert synth_main(["vid"]) == 2
    assert synth_main(["vid", "--out", str(tmp_path / "x"), "--train-videos", "0"]) == 2
    assert ">= 1" in capsys.readouterr().err
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "f").write_text("x")
    assert synth_main(["vid", "--out", str(tmp_path / "busy")]) == 2
    out = tmp_path / "ok"
    assert (
        synth_main(
            [
                "vid",
                "--out",
                str(out),
                "--train-videos",
                "1",
                "--val-videos",
                "1",
                "--width",
                "64",
                "--height",
                "64",
                "--frames",
                "12",
                "--no-progress",
            ]
        )
        == 0
    )
    assert (out / "ImageSets" / "VID" / "val.txt").is_file()
    assert (out / "corruptions.json").is_file()
    assert json.loads((out / "synth.json").read_text())["motion_blur"] == synth_snippets.MOTION_BLUR


def test_cli_motion_blur(tmp_path, capsys):
    small = ["--train-videos", "1", "--val-videos", "1", "--frames", "12", "--no-progress"]
    small += ["--width", "64", "--height", "64"]
    assert synth_main(["vid", "--out", str(tmp_path / "neg"), "--motion-blur", "-1", *small]) == 2
    assert "--motion-blur: must be >= 0, got -1" in capsys.readouterr().err
    assert not (tmp_path / "neg").exists()
    sharp, blurred = tmp_path / "sharp", tmp_path / "blurred"
    assert synth_main(["vid", "--out", str(sharp), "--motion-blur", "0", *small]) == 0
    assert synth_main(["vid", "--out", str(blurred), "--motion-blur", "1.5", *small]) == 0
    assert json.loads((sharp / "synth.json").read_text())["motion_blur"] == 0
    assert json.loads((blurred / "synth.json").read_text())["motion_blur"] == 1.5
    frames = sorted((sharp / "Data" / "VID" / "train").rglob("*.JPEG"))
    changed = [f for f in frames if f.read_bytes() != (blurred / f.relative_to(sharp)).read_bytes()]
    assert len(frames) == 12 and changed  # the train snippet's fast objects are streaked


def _layer(streak, box=(20, 10, 43, 29), cls="car"):
    """A car pasted over black with ``streak``: ``(H, W, 3)`` float."""
    return np.asarray(
        paste_moving_object(Image.new("RGB", (64, 40)), cls, box, False, 0.5, streak), np.float64
    )


def test_an_object_is_blurred_along_its_own_motion_in_proportion_to_its_speed():
    from PIL import ImageDraw

    sharp = Image.new("RGB", (64, 40))
    draw_object(ImageDraw.Draw(sharp), "car", (20, 10, 43, 29), False, 0.5)
    sharp = np.asarray(sharp, np.float64)
    assert np.array_equal(_layer((0.6, 0.3)), sharp)  # under a pixel: drawn sharp
    for dx in (4, 8):  # horizontal streaks
        blurred = _layer((dx, 0))
        cols = np.flatnonzero(blurred.sum(axis=(0, 2)))
        rows = np.flatnonzero(blurred.sum(axis=(1, 2)))
        # smeared by dx/2 to each side, rows untouched, the light spread out (not lost)
        assert (cols[0], cols[-1]) == (20 - dx // 2, 43 + dx // 2)
        assert (rows[0], rows[-1]) == (10, 29)
        assert blurred.sum() == pytest.approx(sharp.sum(), rel=2e-3)
        assert np.abs(np.diff(blurred, axis=1)).sum() < np.abs(np.diff(sharp, axis=1)).sum()
    vertical = _layer((0, 6))
    rows = np.flatnonzero(vertical.sum(axis=(1, 2)))
    assert (rows[0], rows[-1]) == (7, 32)


def test_fast_objects_are_blurred_slow_ones_sharp_in_the_snippet():
    from tsm_apps.data.motion import motion_class
    from tsm_apps.data.vid_layout import VIDFrame

    changed = {}  # mean absolute change inside each box, by motion class
    for index in range(3):
        sharp, objects, _ = synth_snippets.render_snippet(
            0, "val", index, 24, 96, 80, motion_blur=0
        )
        blurred, again, _ = synth_snippets.render_snippet(0, "val", index, 24, 96, 80)
        assert objects == again  # the same boxes and tracks
        motion = snippet_motion_iou(
            [VIDFrame("s", f"{t:06d}", 96, 80, o) for t, o in enumerate(objects)]
        )
        for t, objs in enumerate(objects):
            for o, m in zip(objs, motion[t]):
                x1, y1, x2, y2 = o.box
                d = np.abs(
                    sharp[t, y1 : y2 + 1, x1 : x2 + 1].astype(int)
                    - blurred[t, y1 : y2 + 1, x1 : x2 + 1].astype(int)
                ).mean()
                changed.setdefault(motion_class(m), []).append(d)
    means = {c: float(np.mean(v)) for c, v in changed.items()}
    assert set(means) == {"slow", "medium", "fast"}
    assert means["fast"] > means["medium"] > means["slow"] and means["fast"] > 10, means
