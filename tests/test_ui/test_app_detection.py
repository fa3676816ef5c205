"""Detection view on random-weight TSN and online-TSM detectors and an annotated VID snippet
(AppTest): limits stated, ground-truth toggle, every box listed (one element for both panels),
configs read as data. The live stream: test_app_live.py."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from tools.random_models import write_detectors
from ui_fixtures import (
    captions,
    image_captions,
    image_urls,
    write_vid_annotations,
    write_vid_snippet,
)

pytestmark = pytest.mark.slow
SNIPPET = "data/vid/Data/VID/val/ILSVRC2015_val_00000000"


@pytest.fixture(scope="module")
def det_runs(tmp_path_factory):
    runs = tmp_path_factory.mktemp("detection") / "runs"
    write_detectors(runs)
    write_vid_snippet(runs / "data" / "vid")
    write_vid_annotations(runs / "data" / "vid")
    return runs


def _reference(det_runs, frames) -> dict:
    """Each model's detections of the whole snippet, one stream, straight from the sources."""
    from ui.app import sources

    return {
        name: sources.detect(
            sources.load_detector(
                sources.DetectorSpec(name, det_runs / "detection" / name.lower())
            ),
            frames,
        )
        for name in ("TSN", "TSM")
    }


def test_browse_limits_ground_truth_marks_and_every_box_listed(app_for, det_runs):
    from ui.app import sources
    from ui.app.widgets.detection_panels import panel_caption

    at = app_for(det_runs, max_frames=4).run()
    assert not at.exception and not at.error
    assert (
        "Detecting on the first 4 of the video's 6 frames at 96x64 (limits: 4 frames, "
        "shorter side 360 px, 70 megapixels decoded; `tsm ui --max-frames N --frame-size PX "
        "--max-decoded-mp MP` changes them)."
    ) in captions(at)
    with_gt = image_urls(at)
    assert len(with_gt) == 2 and len(at.get("image")) == 1  # both panels: one element
    at.checkbox(key="det_gt").uncheck().run()
    assert not at.exception and set(image_urls(at)).isdisjoint(with_gt)
    at.checkbox(key="det_gt").check().run()
    names = [
        t["name"] for t in __import__("json").loads(at.get("plotly_chart")[0].proto.spec)["data"]
    ]
    assert "only TSN finds a GT object" in names and "only TSM finds a GT object" in names
    assert any(c.startswith("Marked frames: TSM finds") for c in captions(at))
    # the captions list every box drawn (score >= 0.3), best first
    frames = sources.read_frames(det_runs / SNIPPET, 4)
    ref = _reference(det_runs, frames)
    at.slider(key="det").set_value(2).run()
    got = image_captions(at)
    want = [panel_caption(n, 2, 4, ref[n][2].keep(0.3)) for n in ("TSN", "TSM")]
    assert got == want
    for name, cap in zip(("TSN", "TSM"), got):
        kept = ref[name][2].keep(0.3)
        listed = cap.split(" — ", 1)[1].split(", ") if len(kept.scores) else []
        assert len(listed) == len(kept.scores) and cap.startswith(
            f"{name} frame 2/3: {len(kept.scores)} box(es)"
        )
        assert [float(x.rsplit(" ", 1)[1]) for x in listed] == sorted(
            (round(float(s), 2) for s in kept.scores), reverse=True
        )


def test_config_that_is_code_is_refused_and_never_run(app_for, det_runs, tmp_path):
    runs = tmp_path / "runs"
    shutil.copytree(det_runs, runs)
    marker = tmp_path / "ran"
    config = runs / "detection" / "tsm" / "config.py"
    config.write_text(config.read_text() + f"\nopen({str(marker)!r}, 'w').close()\n")
    at = app_for(runs).run()
    assert not at.exception and not marker.exists()
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "\n" not in errors[0], errors
    assert (
        errors[0].startswith(f"Detection view: {config}:")
        and "is not allowed; a config is read as data" in errors[0]
    )


def test_downscaled_snippet_keeps_its_ground_truth_on_the_object(app_for, det_runs):
    """At a working resolution below the snippet's size the frames are decoded downscaled and
    the ground-truth boxes follow them (the square of frame t is at x 8+10t, y 20 at 96x64)."""
    from ui.app import sources
    from ui.app.widgets.detection_panels import _truth

    at = app_for(det_runs, TSM_UI_FRAME_SIZE="32").run()
    assert not at.exception and not at.error
    assert any(
        c.startswith(
            "Detecting on all 6 frames of the video at 48x32, downscaled from "
            "96x64 to the working resolution (limits: 300 frames, shorter side "
            "32 px,"
        )
        for c in captions(at)
    )
    truth = _truth(str(det_runs / SNIPPET), 6, 0.5)
    full = sources.read_truth(det_runs / SNIPPET, 6)
    for t in range(6):
        np.testing.assert_array_equal(truth[t].boxes, full[t].boxes * 0.5)
        assert truth[t].boxes.tolist() == [[4 + 5 * t, 10, 14 + 5 * t, 20]]
