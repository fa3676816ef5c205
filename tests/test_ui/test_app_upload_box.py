"""The video upload box holds at most one file (AppTest, the Detection view; every view's video
choice is the one widget ``ui.app.widgets.video_source.choose_video``): once a video is kept
the box is emptied and the page names the file it uses, so a file the browser refuses later
(over the box's own limit) is never shown beside a previous one; a file the app refuses empties
the box too, the page naming the file and the limit, and the previous video stays in use."""

from __future__ import annotations

import os

import pytest

from tools.random_models import write_detectors
from tools.sample_videos import sample_video
from ui_fixtures import captions

pytestmark = pytest.mark.slow


def _boxes(at) -> dict:
    """Upload boxes on the page: widget key -> the files it holds (names)."""
    return {
        u.key: [f.name for f in (u.value or [])]
        if isinstance(u.value, list)
        else ([u.value.name] if u.value is not None else [])
        for u in at.get("file_uploader")
    }


def test_an_oversize_upload_empties_the_box_and_names_file_and_limit(app_for, tmp_path):
    runs = tmp_path / "runs"
    write_detectors(runs)
    at = app_for(runs, max_upload_mb=1, max_frames=8).run()
    at.sidebar.radio(key="view").set_value("Detection").run()
    at.radio(key="det_kind").set_value("Upload a video").run()
    assert _boxes(at) == {"det_upload_0": []}
    assert [i.value for i in at.info][0] == "Choose a video file to upload."

    clip = sample_video("carphone_pristine.mp4")
    assert clip.stat().st_size < 2**20  # within the 1 MB limit
    at.file_uploader(key="det_upload_0").upload(
        "carphone.mp4", clip.read_bytes(), "video/mp4"
    ).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    kb = clip.stat().st_size / 2**10
    using = f"Using `carphone.mp4` ({kb:.1f} kB), uploaded; choose another file to replace it."
    assert _boxes(at) == {"det_upload_1": []}  # kept, then an empty box
    assert using in captions(at) and any(
        c.startswith("Detecting on the first 8 of the video's ") for c in captions(at)
    )

    big = os.urandom(3 * 2**19)  # 1.5 MB
    at.file_uploader(key="det_upload_1").upload("big.mp4", big, "video/mp4").run()
    assert [e.value for e in at.error] == ["`big.mp4` is 1.5 MB; the limit is 1 MB."]
    assert _boxes(at) == {"det_upload_2": []}  # refused: the box emptied, no chip left
    assert using in captions(at)  # the previous video still in use
    assert not at.exception
