"""Attention of two user-chosen checkpoints on a real video of the runs folder (AppTest)."""

from __future__ import annotations

import shutil

import pytest

from tools.random_models import write_checkpoints
from tools.sample_videos import sample_video
from ui_fixtures import image_captions, image_urls

MODE = "Any two checkpoints on any video"


@pytest.fixture(scope="module")
def compare_runs(tmp_path_factory):
    runs = tmp_path_factory.mktemp("compare") / "runs"
    write_checkpoints(runs)
    (runs / "videos").mkdir()
    shutil.copyfile(sample_video("carphone_pristine.mp4"), runs / "videos" / "carphone.mp4")
    return runs


def _open(app_for, runs, **env):
    at = app_for(runs, **env).run()
    at.sidebar.radio(key="view").set_value("Attention").run()
    at.radio(key="att_mode").set_value(MODE).run()
    at.radio(key="attc_kind").set_value("Video in the runs folder").run()
    return at


def test_two_checkpoints_maps_top5_class_and_slider(app_for, compare_runs):

    at = _open(app_for, compare_runs)
    assert not at.exception and not at.error, [e.value for e in at.error]
    # the default pair: TSN as model A, TSM as model B (found by their configs, not names)
    assert at.selectbox(key="attc_ckpt_A").value.endswith("tsn/best.pth")
    assert at.selectbox(key="attc_ckpt_B").value.endswith("tsm/best.pth")
    assert at.subheader[0].value == "Where TSN and TSM look"
    caps = image_captions(at)
    assert [c.split(":")[0] for c in caps] == [
        "A frame 0/3 (video frame 15)",
        "B frame 0/3 (video frame 15)",
    ]  # 120 frames, T=4
    # each model's clip under its recorded protocol (T = 4 of 120 frames, shorter side 32,
    # centre crop 32); the top-5 tables are the answer tsm test gives (tsm_apps.evaluation)
    from tsm_apps.evaluation import open_checkpoint, predict

    tables = [t.value for t in at.dataframe]
    for slot, table in zip("AB", tables[:2]):
        path = at.selectbox(key=f"attc_ckpt_{slot}").value
        pred = predict(open_checkpoint(path), compare_runs / "videos" / "carphone.mp4")
        assert pred.indices.tolist() == [[15, 45, 75, 105]]
        assert table["class"].tolist() == [t["name"] for t in pred.top5]
        assert [float(v) for v in table["probability"]] == pytest.approx(
            [t["prob"] for t in pred.top5], abs=1e-4
        )
    before = image_urls(at)
    assert len(before) == 2 and before[0] != before[1]
    at.slider(key="attc").set_value(2).run()
    assert image_captions(at)[1].startswith("B frame 2/3 (video frame 75)")
    assert set(image_urls(at)[:2]).isdisjoint(before)
    # a chosen class: both models explain class 3
    at.selectbox(key="attc_class").set_value("3: action 3").run()
    assert not at.exception
    assert sum("of 'action 3'" in c for c in image_captions(at)) == 2


def test_method_and_bad_typed_path(app_for, compare_runs):
    at = _open(app_for, compare_runs)
    at.sidebar.selectbox(key="attc_method").set_value("gradcam").run()
    assert not at.exception and not at.error
    assert sum("gradcam of" in c for c in image_captions(at)) == 2
    at.selectbox(key="attc_ckpt_B").set_value("(type a path)").run()
    at.text_input(key="attc_path_B").input(str(compare_runs / "nowhere.pth")).run()
    assert not at.exception
    assert [e.value for e in at.error] == [
        f"Model B: checkpoint not found: {compare_runs / 'nowhere.pth'}"
    ]
    at.text_input(key="attc_path_B").input(str(compare_runs / "train")).run()
    assert [e.value for e in at.error] == [
        f"Model B: {compare_runs / 'train'} is a folder; expected a checkpoint file (.pth)"
    ]


def test_typed_paths_outside_the_allowed_folders_are_refused(app_for, compare_runs, tmp_path):
    """A typed path may name the runs folder, the uploads or a folder allowed on the command
    line; anything else is refused in one line and never read."""
    from ui.app.settings import ENV_ALLOW_ROOTS

    elsewhere = tmp_path / "models"
    elsewhere.mkdir()
    shutil.copyfile(compare_runs / "train" / "tsm" / "best.pth", elsewhere / "tsm.pth")
    at = _open(app_for, compare_runs)
    at.selectbox(key="attc_ckpt_B").set_value("(type a path)").run()
    for typed in (
        str(elsewhere / "tsm.pth"),
        f"{compare_runs}/../../{elsewhere.parent.name}/models/tsm.pth",
        "/etc/passwd",
    ):
        at.text_input(key="attc_path_B").input(typed).run()
        assert not at.exception
        assert [e.value for e in at.error] == [
            f"Model B: {typed}: outside the folders this app may read (the runs folder, "
            "this session's uploads, and folders allowed with `tsm ui --allow-root DIR`)"
        ]
        assert any("Choose two checkpoints" in i.value for i in at.info)
    at = _open(app_for, compare_runs, **{ENV_ALLOW_ROOTS: str(elsewhere)})
    at.selectbox(key="attc_ckpt_B").set_value("(type a path)").run()
    at.text_input(key="attc_path_B").input(str(elsewhere / "tsm.pth")).run()
    assert not at.exception and not at.error
    assert at.markdown[0].value.startswith(
        "**Model A:** `train/tsn/best.pth` — TSN (no shift) · "
        f"**Model B:** `{elsewhere / 'tsm.pth'}` — TSM"
    )


def test_a_checkpoint_can_be_uploaded_instead(app_for, compare_runs):
    at = _open(app_for, compare_runs)
    box = at.selectbox(key="attc_ckpt_B")
    assert box.options[-2:] == ["(type a path)", "(upload a checkpoint)"]
    box.set_value("(upload a checkpoint)").run()
    assert not at.exception
    assert any("Choose two checkpoints" in i.value for i in at.info)  # waits for the file
    # kept, the box is emptied (a file refused later is not shown beside it) and the page
    # names the file in use
    ckpt = compare_runs / "train" / "tsm" / "best.pth"
    at.file_uploader(key="attc_upload_B_0").upload(
        "my tsm.pth", ckpt.read_bytes(), "application/octet-stream"
    ).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert [(u.key, u.value) for u in at.get("file_uploader")] == [("attc_upload_B_1", None)]
    kb = ckpt.stat().st_size / 2**10
    assert f"Using `my tsm.pth` ({kb:.1f} kB), uploaded; choose another file to replace it." in [
        c.value for c in at.caption
    ]
    assert "` — TSM" in at.markdown[0].value.split(" · ")[1]


def test_uploaders_state_the_limit_they_enforce(app_for, compare_runs):
    """The uploader's own limit (the "Limit N MB per file" it shows and enforces) is the one its
    help text gives: the video and the checkpoint uploaders each have theirs."""
    at = _open(app_for, compare_runs, **{"TSM_UI_MAX_CHECKPOINT_MB": "120"})
    at.radio(key="attc_kind").set_value("Upload a video").run()
    at.selectbox(key="attc_ckpt_B").set_value("(upload a checkpoint)").run()
    up = {u.proto.label: u.proto for u in at.get("file_uploader")}
    assert (up["Video file"].max_upload_size_mb, up["Video file"].help) == (
        50,
        "at most 50 MB and 3840x2160 pixels; decoded within the limits below",
    )
    ck = up["Checkpoint of model B"]
    assert (ck.max_upload_size_mb, ck.help) == (
        120,
        "at most 120 MB; kept while this session lasts",
    )


@pytest.mark.parametrize("kind", ["pickle", "nodata", "truncated", "random", "detector"])
def test_a_bad_checkpoint_is_one_line_on_the_page(app_for, compare_runs, tmp_path, kind):
    import os
    import pickle
    import zipfile

    import torch

    bad = compare_runs / "bad" / f"{kind}.pth"
    bad.parent.mkdir(exist_ok=True)
    if kind == "pickle":
        bad.write_bytes(pickle.dumps({"state_dict": {}}))
    elif kind == "nodata":
        with zipfile.ZipFile(bad, "w") as z:
            z.writestr("a/readme.txt", "x")
    elif kind == "truncated":
        data = (compare_runs / "train" / "tsm" / "best.pth").read_bytes()
        bad.write_bytes(data[: len(data) // 3])
    elif kind == "random":
        bad.write_bytes(os.urandom(3000))
    else:
        torch.save({"state_dict": {"backbone.trunk.conv1.weight": torch.zeros(2, 3, 7, 7)}}, bad)
    try:
        at = _open(app_for, compare_runs)
        at.selectbox(key="attc_ckpt_B").set_value("(type a path)").run()
        at.text_input(key="attc_path_B").input(str(bad)).run()
        assert not at.exception
        errors = [e.value for e in at.error]
        assert len(errors) == 1 and "\n" not in errors[0], errors
        assert errors[0].startswith(f"Model B: cannot use {kind}.pth as a recognizer: {bad}")
        assert "weights_only" not in errors[0].lower()
    finally:
        bad.unlink()


def test_a_typed_relative_path_is_read_in_the_runs_folder(app_for, compare_runs):
    """A path typed as the list shows it (relative to the runs folder) is that checkpoint; a
    relative path that climbs out of the runs folder is refused, named as typed."""
    at = _open(app_for, compare_runs)
    at.selectbox(key="attc_ckpt_B").set_value("(type a path)").run()
    at.text_input(key="attc_path_B").input("train/tsm/best.pth").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert "**Model B:** `train/tsm/best.pth` — TSM" in at.markdown[0].value
    at.text_input(key="attc_path_B").input("../../etc/passwd").run()
    assert [e.value for e in at.error] == [
        "Model B: ../../etc/passwd: outside the folders this app may read (the runs folder, "
        "this session's uploads, and folders allowed with `tsm ui --allow-root DIR`)"
    ]


def test_no_server_path_or_session_id_on_the_page_and_names_shown_as_text(
    app_for, compare_runs, tmp_path
):
    """An uploaded checkpoint and a truncated faststart mp4, named like Markdown links: the page
    names them as given, literally (code spans: no link), and no element holds the upload
    area's path or the session id -- not the models' line, not the error line of the video."""
    from ui_fixtures import faststart_mp4, page_text

    at = _open(app_for, compare_runs)
    at.selectbox(key="attc_ckpt_B").set_value("(upload a checkpoint)").run()
    ckpt = compare_runs / "train" / "tsm" / "best.pth"
    at.file_uploader(key="attc_upload_B_0").upload(
        "[link](http://x).pth", ckpt.read_bytes(), "application/octet-stream"
    ).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.markdown[0].value.split(" · ")[1] == (
        "**Model B:** `[link](http://x).pth` — TSM (offline shift)"
    )
    assert any(c.value.startswith("Using `[link](http://x).pth` (") for c in at.caption)
    folder = at.session_state["_session_folder"]
    assert folder.path.is_dir() and folder.owner  # AppTest: "test session id"
    text = page_text(at)
    assert folder.owner not in text and str(folder.path.parent) not in text
    assert "tsm_ui_upload" not in text and "session_" not in text

    mp4 = faststart_mp4(sample_video("carphone_pristine.mp4"), tmp_path / "fs.mp4").read_bytes()
    at.radio(key="attc_kind").set_value("Upload a video").run()
    at.file_uploader(key="attc_upload_0").upload(
        "[v](http://y).mp4", mp4[: len(mp4) * 6 // 10], "video/mp4"
    ).run()
    assert not at.exception
    errors = [e.value for e in at.error]
    assert errors and "`[v](http://y).mp4`" in errors[0], errors
    text = page_text(at)
    assert folder.owner not in text and str(folder.path.parent) not in text
    assert "tsm_ui_upload" not in text and "session_" not in text


def test_another_sessions_upload_cannot_be_read_by_typing_its_path(app_for, compare_runs):
    """Typed paths resolve in the runs folder and the session's OWN uploads: the kept path of
    another session's upload (same server, same upload area) is refused in one line, named as
    typed; a path in this session's own uploads is read."""
    from ui.app.session import SessionFolder, upload_area
    from ui.app.settings import DEFAULT_IDLE_MINUTES
    from ui.app.sources.uploads import keep_checkpoint

    ckpt = compare_runs / "train" / "tsm" / "best.pth"
    with SessionFolder(upload_area(DEFAULT_IDLE_MINUTES), "another session") as other:
        theirs = keep_checkpoint("theirs.pth", ckpt.read_bytes(), 2**30, other.path)
        at = _open(app_for, compare_runs)
        at.selectbox(key="attc_ckpt_B").set_value("(type a path)").run()
        at.text_input(key="attc_path_B").input(str(theirs)).run()
        assert not at.exception
        assert [e.value for e in at.error] == [
            f"Model B: {theirs}: outside the folders this app may read (the runs folder, "
            "this session's uploads, and folders allowed with `tsm ui --allow-root DIR`)"
        ]
        at.selectbox(key="attc_ckpt_A").set_value("(upload a checkpoint)").run()
        at.file_uploader(key="attc_upload_A_0").upload(
            "mine.pth", ckpt.read_bytes(), "application/octet-stream"
        ).run()
        mine = at.session_state["attc_upload_A__held"].value
        assert mine.parent.parent.parent == other.path.parent  # the same upload area
        at.text_input(key="attc_path_B").input(str(mine)).run()
        assert not at.exception and not at.error, [e.value for e in at.error]
        assert "**Model B:** `mine.pth` — TSM" in at.markdown[0].value.split(" · ")[1]


def test_the_caption_says_what_the_maps_are_of(app_for, compare_runs):
    """With 8 of the video's 120 frames decoded, the maps are still of the frames the test
    protocol samples from all 120 (video frames 15, 45, 75, 105): the caption says so."""
    at = _open(app_for, compare_runs, max_frames=8)
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert image_captions(at)[0].startswith("A frame 0/3 (video frame 15)")
    note = next(c.value for c in at.caption if c.value.startswith("The maps are of"))
    assert note == (
        "The maps are of the frames each model's test protocol samples from all 120 frames "
        "of the video (each panel names its video frame); decoded for the player: the first "
        "8 of the video's 120 frames at 176x144 (limits: 8 frames, shorter side 360 px, 70 "
        "megapixels decoded; `tsm ui --max-frames N --frame-size PX --max-decoded-mp MP` "
        "changes them)."
    )
