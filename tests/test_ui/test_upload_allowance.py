"""The server's upload allowance (ui.app.upload_allowance): an upload request is taken only
for a session whose page shows an upload box, within that page's byte limit (one box: its
own), and up to the per-session count an hour; what the app's boxes register (AppTest)."""

from __future__ import annotations

import pytest

from ui.app.upload_allowance import FRESH_S, MULTIPART_OVERHEAD, WINDOW_S, UploadAllowance

MB = 2**20


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def test_a_request_is_held_to_the_pages_box_and_the_count():
    clock = Clock()
    up = UploadAllowance(clock)
    assert up.refusal("s1", str(MB)) == "no upload box is open on this session's page"
    up.box("s1", "det_upload", 50 * MB, 2)
    limit = 50 * MB + MULTIPART_OVERHEAD
    assert up.body_limit("s1") == limit and up.body_limit("s2") is None
    assert up.refusal("s1", str(100 * MB)) == (
        f"{100 * MB} bytes is over this page's upload limit of {limit} bytes"
    )  # the 100 MB PUT, twice the video box's limit
    assert up.refusal("s1", None) == "an upload must state its Content-Length"
    assert up.refusal("s1", "-5") == "an upload must state its Content-Length"
    assert up.refusal("s1", str(limit)) is None
    assert up.refusal("s1", "10") is None
    assert up.refusal("s1", "10") == "2 uploads in the last hour; the limit is 2"
    assert up.refusal("s2", "10") == "no upload box is open on this session's page"
    clock.t += WINDOW_S + 1  # the window slides; the box, drawn long ago, is closed
    assert up.refusal("s1", "10") == "no upload box is open on this session's page"
    up.box("s1", "det_upload", 50 * MB, 2)
    assert up.refusal("s1", "10") is None
    clock.t += FRESH_S + 1
    assert up.body_limit("s1") is None
    up.forget("s1")
    assert up.refusal("s1", "10") == "no upload box is open on this session's page"


@pytest.mark.parametrize("length", ["", "abc", "1e9", "99999999999999999999"])
def test_bad_lengths_are_refused_not_raised(length):
    up = UploadAllowance(Clock())
    up.box("s", "k", MB, 5)
    assert up.refusal("s", length) == "an upload must state its Content-Length"


def test_the_apps_boxes_register_their_own_limits(app_for, tmp_path):
    """The Attention view's video box registers the video limit, its checkpoint box the
    checkpoint limit, each with the session's upload count (tsm ui --max-uploads)."""
    from tools.random_models import write_checkpoints
    from ui.app.upload_allowance import UPLOADS

    runs = tmp_path / "runs"
    write_checkpoints(runs)
    at = app_for(runs, max_upload_mb=3, TSM_UI_MAX_CHECKPOINT_MB="7", TSM_UI_MAX_UPLOADS="4")
    at.run()
    at.sidebar.radio(key="view").set_value("Attention").run()
    at.radio(key="att_mode").set_value("Any two checkpoints on any video").run()
    at.radio(key="attc_kind").set_value("Upload a video").run()
    assert not at.exception
    sid = "test session id"  # AppTest's
    UPLOADS.forget(sid)
    at.run()
    assert UPLOADS.body_limit(sid) == 3 * MB + MULTIPART_OVERHEAD
    at.selectbox(key="attc_ckpt_B").set_value("(upload a checkpoint)").run()
    assert UPLOADS.body_limit(sid) == 7 * MB + MULTIPART_OVERHEAD
    for _ in range(4):
        assert UPLOADS.refusal(sid, "100") is None
    assert UPLOADS.refusal(sid, "100") == "4 uploads in the last hour; the limit is 4"
    UPLOADS.forget(sid)
