"""The synthetic temporal set: files and schema, ground truth on the actor, time reversal
between paired classes, determinism, resume, CLI exit codes. Tiny sizes."""

import json

import numpy as np
import pytest

from tsm_apps.data.video import read_video_frames
from tsm_apps.synth import draw as synth_draw
from tsm_apps.synth import temporal as synth_temporal
from tsm_apps.synth import temporal_clips as synth_clips
from tsm_apps.synth.cli import main as synth_main

FRAMES, SIZE = 8, 32


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("temporal")
    return synth_temporal.generate(root, videos=10, frames=FRAMES, size=SIZE, seed=3, workers=1)


def _lines(path):
    return [line.split() for line in path.read_text().splitlines()]


def test_lists_classes_and_annotations(tiny):
    train, val, test = (_lines(tiny / f"{s}.txt") for s in ("train", "val", "test"))
    # 10 videos, 1/6 each held out, at least 2: videos 0-5 train, 6-7 val, 8-9 test
    assert [r for r, _, _ in val] == ["videos/00006.mp4", "videos/00007.mp4"]
    assert [r for r, _, _ in test] == ["videos/00008.mp4", "videos/00009.mp4"]
    assert len(train) == 6
    ann = json.loads((tiny / "annotations.json").read_text())
    assert (
        ann["classes"]
        == list(synth_clips.CLASSES)
        == (tiny / "classes.txt").read_text().splitlines()
    )
    assert len(ann["classes"]) == 10
    assert sorted(int(lab) for _, _, lab in train + val + test) == list(range(10))
    for rel, n, lab in train + val + test:
        assert (tiny / rel).is_file() and int(n) == FRAMES
        v = ann["videos"][rel]
        assert v["label"] == int(lab) and v["class"] == ann["classes"][v["label"]]
        assert len(v["boxes"]) == len(v["active"]) == FRAMES
        assert any(v["active"])
        for box in v["boxes"]:
            if box is not None:
                x1, y1, x2, y2 = box
                assert 0 <= x1 < x2 <= SIZE and 0 <= y1 < y2 <= SIZE
    # appearing: no box before the actor shows up, a box from then on
    appear = next(v for v in ann["videos"].values() if v["label"] == 8)
    assert appear["boxes"][0] is None and appear["boxes"][-1] is not None


def test_decoded_frames_match_rendering(tiny):
    frames = read_video_frames(tiny / "videos" / "00004.mp4", list(range(FRAMES)))
    assert frames.shape == (FRAMES, SIZE, SIZE, 3) and frames.dtype == np.uint8
    plan = synth_clips.plan_clip(3, 4, FRAMES, SIZE)
    rendered = synth_clips.render_clip(plan, SIZE)
    assert np.abs(frames.astype(int) - rendered).mean() < 5  # lossless, but 4:2:0 chroma


@pytest.mark.parametrize("layout", synth_clips.LAYOUTS)
@pytest.mark.parametrize("label", range(10))
def test_change_between_frames_is_on_the_actor(label, layout):
    size, frames = 64, 8
    plan = synth_clips.plan_clip(1, 7, frames, size, label=label, distractors=(2, 2), layout=layout)
    video = synth_clips.render_clip(plan, size).astype(int)
    boxes = plan.boxes(size)
    assert len(plan.distractors) == 2
    inside = total = 0
    for t in range(frames - 1):
        changed = np.abs(video[t + 1] - video[t]).sum(-1) > 0
        mask = np.zeros_like(changed)
        for b in (boxes[t], boxes[t + 1]):
            if b is not None:
                mask[b[1] : b[3], b[0] : b[2]] = True
        inside += (changed & mask).sum()
        total += changed.sum()
    assert total > 0 and inside == total  # the background and distractors never change


@pytest.mark.parametrize("layout", synth_clips.LAYOUTS)
@pytest.mark.parametrize("family", range(5))
def test_paired_classes_are_time_reversals(family, layout):
    """Class 2k+1 is class 2k played backwards: same frames, same set of frames."""
    a = synth_clips.plan_clip(0, 11, FRAMES, SIZE, label=2 * family, layout=layout)
    b = synth_clips.plan_clip(0, 11, FRAMES, SIZE, label=2 * family + 1, layout=layout)
    va, vb = synth_clips.render_clip(a, SIZE), synth_clips.render_clip(b, SIZE)
    np.testing.assert_array_equal(va[::-1], vb)
    assert a.boxes(SIZE)[::-1] == b.boxes(SIZE)
    np.testing.assert_array_equal(a.active[::-1], b.active)
    assert not np.array_equal(va, vb)  # but the order differs


def test_deterministic_by_seed_and_resumes(tiny, tmp_path):
    again = synth_temporal.generate(
        tmp_path / "a", videos=10, frames=FRAMES, size=SIZE, seed=3, workers=2
    )
    for name in ("train.txt", "val.txt", "test.txt", "annotations.json"):
        assert (again / name).read_bytes() == (tiny / name).read_bytes()
    idx = list(range(FRAMES))
    for rel in ("videos/00000.mp4", "videos/00009.mp4"):
        np.testing.assert_array_equal(
            read_video_frames(again / rel, idx), read_video_frames(tiny / rel, idx)
        )
    other = synth_temporal.generate(
        tmp_path / "b", videos=10, frames=FRAMES, size=SIZE, seed=4, workers=1
    )
    assert (other / "annotations.json").read_bytes() != (tiny / "annotations.json").read_bytes()
    # resume: a missing video is written again, the finished ones are kept
    (again / "videos/00002.mp4").unlink()
    kept = (again / "videos/00003.mp4").stat().st_mtime_ns
    synth_temporal.generate(again, videos=10, frames=FRAMES, size=SIZE, seed=3, workers=1)
    assert (again / "videos/00002.mp4").is_file()
    assert (again / "videos/00003.mp4").stat().st_mtime_ns == kept
    assert not list(again.glob("videos/.*"))  # no temporary files left
    with pytest.raises(ValueError, match="other|different|already holds"):
        synth_temporal.generate(again, videos=12, frames=FRAMES, size=SIZE, seed=3)


def test_distractor_count_is_the_same_for_every_class():
    for label in range(10):
        for want in (0, 1, 2):
            plan = synth_clips.plan_clip(
                2, label, FRAMES, 64, label=label, distractors=(want, want)
            )
            assert len(plan.distractors) == want
    # the default draws 0-2 independently of the class
    counts = [len(synth_clips.plan_clip(0, i, FRAMES, 64).distractors) for i in range(30)]
    assert set(counts) == {0, 1, 2}


@pytest.mark.parametrize("family", range(5))
def test_stage_layout_keeps_the_path_in_a_square_the_distractors_avoid(family):
    size = 112
    w = synth_clips.STAGE * size
    lo, hi = (f * size for f in synth_clips.STAGE_SIDES)
    sides = []
    for i in range(20):
        plan = synth_clips.plan_clip(
            4, i, 16, size, label=2 * family, distractors=(2, 2), layout="stage"
        )
        boxes = np.array([b for b in plan.boxes(size) if b is not None])
        path = [*boxes[:, :2].min(0), *boxes[:, 2:].max(0)]  # union of the actor's boxes
        assert path[2] - path[0] <= w + 1 and path[3] - path[1] <= w + 1
        assert len(plan.distractors) == 2
        for cx, cy, side, angle in plan.distractors:
            d = synth_draw.bbox(
                synth_draw.place(synth_draw.L_SHAPE, cx, cy, side, angle), size, size
            )
            assert not synth_draw.overlaps(d, path)
            assert lo <= side <= hi
        sides += list(plan.states[:, 2])
        if family in (0, 1):  # a mover crosses the whole stage along its axis
            travel = np.ptp(plan.states[:, family])
            assert travel == pytest.approx(w - 2 * (synth_draw.L_RADIUS * plan.states[0, 2] + 1))
    # one side range for every family: a scaling actor sweeps it, the others draw from it
    assert lo <= min(sides) and max(sides) <= hi
    if family == 2:
        assert min(sides) < lo + 0.1 * (hi - lo) and max(sides) > hi - 0.1 * (hi - lo)


def test_stage_layout_hides_the_axis_of_motion_in_the_distractors_placement():
    """Mean of |dx| - |dy| from the actor (mid-clip) to its one distractor, 200 clips per
    family: the path layout puts horizontal movers' distractors above or below them and
    vertical movers' beside them (a single frame tells the axis); the stage layout does not."""

    def spread(layout, family):
        v = []
        for i in range(200):
            p = synth_clips.plan_clip(
                5, i, 16, 112, label=2 * family, distractors=(1, 1), layout=layout
            )
            (ax, ay), (dx, dy) = p.states[8, :2], p.distractors[0, :2]
            v.append(abs(dx - ax) - abs(dy - ay))
        return float(np.mean(v))

    assert spread("path", 0) == pytest.approx(-30.08, abs=0.01)
    assert spread("path", 1) == pytest.approx(28.06, abs=0.01)
    assert spread("stage", 0) == pytest.approx(-5.74, abs=0.01)
    assert spread("stage", 1) == pytest.approx(-4.61, abs=0.01)


def test_layout_is_recorded_only_when_not_the_default(tmp_path):
    a = synth_temporal.generate(tmp_path / "a", videos=2, frames=4, size=32, workers=1)
    b = synth_temporal.generate(
        tmp_path / "b", videos=2, frames=4, size=32, workers=1, layout="stage"
    )
    assert "layout" not in json.loads((a / "synth.json").read_text())
    assert json.loads((b / "synth.json").read_text())["layout"] == "stage"
    with pytest.raises(ValueError, match="already holds"):
        synth_temporal.generate(tmp_path / "b", videos=2, frames=4, size=32, workers=1)


def test_bad_arguments():
    with pytest.raises(ValueError, match="layout"):
        synth_clips.plan_clip(0, 0, 8, 32, layout="grid")
    with pytest.raises(ValueError, match="videos"):
        synth_temporal.generate("/nonexistent/x", videos=1)
    with pytest.raises(ValueError, match="even"):
        synth_temporal.generate("/nonexistent/x", size=33)
    with pytest.raises(ValueError, match="distractors"):
        synth_temporal.generate("/nonexistent/x", distractors=(2, 1))
    with pytest.raises(ValueError, match="label"):
        synth_clips.plan_clip(0, 0, 8, 32, label=10)


def test_cli_exit_codes(tmp_path, capsys):
    assert synth_main([]) == 2
    assert synth_main(["temporal"]) == 2
    assert "--out" in capsys.readouterr().err
    assert synth_main(["temporal", "--out", str(tmp_path / "x"), "--videos", "one"]) == 2
    assert "expected an integer" in capsys.readouterr().err
    assert synth_main(["temporal", "--out", str(tmp_path / "x"), "--size", "33"]) == 2
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "other.txt").write_text("x")
    assert (
        synth_main(
            [
                "temporal",
                "--out",
                str(tmp_path / "full"),
                "--videos",
                "2",
                "--frames",
                "4",
                "--size",
                "32",
            ]
        )
        == 2
    )
    assert "not empty" in capsys.readouterr().err
    out = tmp_path / "ok"
    assert (
        synth_main(
            [
                "temporal",
                "--out",
                str(out),
                "--videos",
                "2",
                "--frames",
                "4",
                "--size",
                "32",
                "--workers",
                "1",
                "--no-progress",
            ]
        )
        == 0
    )
    assert (out / "annotations.json").is_file()
    assert synth_main(["temporal", "--out", str(tmp_path / "y"), "--layout", "grid"]) == 2
    assert "invalid choice: 'grid'" in capsys.readouterr().err
    assert synth_main(["temporal", "--help"]) == 0


def test_cli_layout_choices_are_the_generators():
    """The CLI lists the layouts itself (importing the generator pulls in torch); they agree."""
    from tsm_apps.synth.cli import build_parser

    temporal = build_parser()._subparsers._group_actions[0].choices["temporal"]
    layout = next(a for a in temporal._actions if a.dest == "layout")
    assert tuple(layout.choices) == synth_clips.LAYOUTS and layout.default is None


def test_held_out_split_sizes():
    # the default 720 keeps the 480 train / 120 val clips of the 600-video sets, adds 120 test
    assert synth_temporal.held_out(720, 1 / 6, 1 / 6) == (120, 120)
    assert synth_temporal.held_out(600, 0.2, 0.0) == (120, 0)
    assert synth_temporal.held_out(3, 1 / 6, 1 / 6) == (2, 0)  # one train clip left
    with pytest.raises(ValueError, match="test_fraction"):
        synth_temporal.generate("/nonexistent/x", videos=10, test_fraction=0.9)
