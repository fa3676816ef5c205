"""Detection view on random-weight TSN and online-TSM detectors and an annotated VID snippet
(AppTest): frame limit stated, ground-truth toggle, the live stream."""
from __future__ import annotations

import numpy as np
import pytest

from ui_fixtures import (captions, image_urls, write_detectors, write_vid_annotations,
                         write_vid_snippet)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def det_runs(tmp_path_factory):
    runs = tmp_path_factory.mktemp("detection") / "runs"
    write_detectors(runs)
    write_vid_snippet(runs / "data" / "vid")
    write_vid_annotations(runs / "data" / "vid")
    return runs


def test_browse_limit_ground_truth_and_marks(app_for, det_runs):
    at = app_for(det_runs, max_frames=4).run()
    assert not at.exception and not at.error
    assert "Detecting on the first 4 of the video's 6 frames (frame limit 4; " \
           "`tsm ui --max-frames N` changes it)." in captions(at)
    with_gt = image_urls(at)
    at.checkbox(key="det_gt").uncheck().run()
    assert not at.exception and set(image_urls(at)).isdisjoint(with_gt)
    at.checkbox(key="det_gt").check().run()
    names = [t["name"] for t in __import__("json").loads(
        at.get("plotly_chart")[0].proto.spec)["data"]]
    assert "only TSN finds a GT object" in names and "only TSM finds a GT object" in names
    assert any(c.startswith("Marked frames: TSM finds") for c in captions(at))


def test_stream_steps_carry_buffers_and_restart(app_for, det_runs):
    from ui.app import sources

    at = app_for(det_runs).run()
    assert "Detecting on all 6 frames of the video (frame limit 300)." in captions(at)
    at.radio(key="det_mode").set_value("Stream (live)").run()
    assert any("press Stream or Step" in c for c in captions(at))
    for _ in range(3):
        at.button(key="live_det_step").click().run()
    assert not at.exception and not at.error
    caps = captions(at)
    assert any(c.startswith("paused: frame 2/5") for c in caps), caps
    tsn = next(c for c in caps if c.startswith("TSN frame 2/5"))
    tsm = next(c for c in caps if c.startswith("TSM frame 2/5"))
    assert tsn.endswith("shift cache 0.0 kB") and not tsm.endswith("shift cache 0.0 kB")
    # frame 2 of the stream equals frame 2 of the whole video run in one go
    stream = at.session_state["live_det"]
    frames = sources.read_frames(det_runs / "data/vid/Data/VID/val/ILSVRC2015_val_00000000", 9)
    for name in ("TSN", "TSM"):
        det = sources.load_detector(sources.DetectorSpec(name, det_runs / "detection" /
                                                         name.lower()))
        ref = sources.detect(det, frames)[2]
        got = stream.last[name][0]
        np.testing.assert_allclose(got.boxes, ref.boxes, atol=1e-3)
        np.testing.assert_allclose(got.scores, ref.scores, atol=1e-5)
    at.button(key="live_det_restart").click().run()
    assert any("press Stream or Step" in c for c in captions(at))
    at.radio(key="det_mode").set_value("Browse all frames").run()
    assert not at.exception and "live_det" not in at.session_state
