"""Attention view: the flow stream's CAM beside the RGB maps, from a dissection run given a flow
checkpoint and from a flow checkpoint chosen on any video (AppTest)."""

from __future__ import annotations

import json
import shutil

import pytest
import torch

from tools.random_models import write_checkpoints
from tools.sample_videos import sample_video
from ui.app.settings import ENV_ALLOW_ROOTS
from ui_fixtures import (
    extract_flow,
    image_captions,
    image_urls,
    write_dissection_runs,
    write_flow_checkpoint,
    write_temporal_data,
)

MODE = "Any two checkpoints on any video"


@pytest.fixture(scope="module")
def flow_runs(tmp_path_factory):
    """TSN and TSM dissection runs of the tiny temporal set, the TSM one with a flow stream."""
    root = tmp_path_factory.mktemp("attention_flow")
    data = write_temporal_data(root / "data")
    flow = extract_flow(data, root / "flow")
    classes = json.loads((data / "annotations.json").read_text())["classes"]
    ckpt = write_flow_checkpoint(root / "flow.pth", len(classes))
    write_dissection_runs(root / "runs", data, flow=(ckpt, flow))
    return root / "runs"


def test_dissection_run_with_flow_shows_the_flow_cam_beside_rgb(app_for, flow_runs):
    from dissect.layout import load_run

    at = app_for(flow_runs).run()
    at.sidebar.radio(key="view").set_value("Attention").run()
    assert not at.exception and not at.error
    cid = at.selectbox(key="att_clip").value
    rec = load_run(flow_runs / "dissect" / "tsm").clips[cid].record
    assert rec["indices"] == [1, 3, 5, 7]  # 8 frames, 4 segments; 7 flow fields
    assert (
        "**TSN (2D baseline, no temporal shift)** · **TSM (temporal shift)** · **TSM run: "
        "flow stream (same segments)**" in [m.value for m in at.markdown]
    )
    urls = image_urls(at)
    assert len(urls) == 3 and len(set(urls)) == 3  # TSN, TSM, TSM's flow stream
    want = f"(from the RGB frame on); cam of '{rec['flow']['class_name']}'"
    assert f"TSM flow frame 0/3: flow fields 1-5 {want}" in image_captions(at)
    at.slider(key="att").set_value(2).run()
    assert f"TSM flow frame 2/3: flow fields 5-6 {want}" in image_captions(at)
    assert image_captions(at)[0].startswith("TSN frame 2/3")


@pytest.fixture(scope="module")
def video_runs(tmp_path_factory):
    """Two RGB checkpoints and a video in the runs folder; a flow checkpoint and the video's
    flow (tsm flow extract) beside it."""
    root = tmp_path_factory.mktemp("compare_flow")
    runs = root / "runs"
    write_checkpoints(runs)
    (runs / "videos").mkdir()
    shutil.copyfile(sample_video("carphone_pristine.mp4"), runs / "videos" / "carphone.mp4")
    extract_flow(runs / "videos" / "carphone.mp4", root / "flow")
    write_flow_checkpoint(root / "flow.pth", 5)
    return runs


def _open(app_for, runs, flow_ckpt, flow_dir):
    at = app_for(runs, **{ENV_ALLOW_ROOTS: str(runs.parent)}).run()  # the flow lies beside
    at.sidebar.radio(key="view").set_value("Attention").run()
    at.radio(key="att_mode").set_value(MODE).run()
    at.radio(key="attc_kind").set_value("Video in the runs folder").run()
    assert len(image_urls(at)) == 2  # no flow checkpoint: the two models only
    at.selectbox(key="attf_ckpt").set_value("(type a path)").run()
    at.text_input(key="attf_path").input(str(flow_ckpt)).run()
    at.text_input(key="attf_dir").input(str(flow_dir)).run()
    return at


def test_any_video_with_a_flow_checkpoint_shows_its_cam(app_for, video_runs):
    from dissect import load_flow_clip
    from tsm_apps import load_checkpoint

    root = video_runs.parent
    at = _open(app_for, video_runs, root / "flow.pth", root / "flow")
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert len(image_urls(at)) == 3
    # RGB frames 15, 45, 75, 105 of 120 (T=4): flow stacks 15-19, 45-49, ... (new_length 5)
    from tools.random_models import SMALL_PROTOCOL as protocol

    clip = load_flow_clip(root / "flow" / "carphone", [15, 45, 75, 105], 5, protocol)
    assert clip.indices[:, 0].tolist() == [15, 45, 75, 105]
    model = load_checkpoint(root / "flow.pth").eval()
    with torch.no_grad():
        top1 = int(model(clip.input[None]).argmax())
    assert (
        f"flow frame 0/3: flow fields 15-19 (from the RGB frame on); cam of 'action {top1}'"
        in image_captions(at)
    )
    at.slider(key="attc").set_value(3).run()
    assert image_captions(at)[2].startswith("flow frame 3/3: flow fields 105-109")


def test_bad_flow_inputs_are_messages_and_rgb_maps_stay(app_for, video_runs):
    root = video_runs.parent
    at = _open(app_for, video_runs, root / "flow.pth", root / "nowhere")
    assert not at.exception and len(image_urls(at)) == 2
    assert [e.value for e in at.error] == [
        f"Flow stream: flow folder not found for videos/carphone.mp4: expected "
        f"{root / 'nowhere' / 'carphone'} (tsm flow extract DATA --out FLOW_DATA)"
    ]
    rgb = video_runs / "train" / "tsm" / "best.pth"
    at = _open(app_for, video_runs, rgb, root / "flow")
    assert not at.exception and len(image_urls(at)) == 2
    assert any(
        "best.pth is not a flow model: it takes 3 input channels" in e.value for e in at.error
    )


def test_runs_view_summary_has_a_row_for_the_flow_stream(app_for, flow_runs):
    from dissect.layout import load_run
    from ui.app.widgets.tables import DISSECTION_SCORES

    metrics = load_run(flow_runs / "dissect" / "tsm").metrics
    flow = metrics["aggregate"]["flow"]
    at = app_for(flow_runs).run()
    at.sidebar.radio(key="view").set_value("Runs").run()
    assert not at.exception
    tables = [df.value for df in at.dataframe if "TSM: flow stream" in df.value.index]
    assert len(tables) == 1
    t = tables[0]
    assert list(t.index) == ["TSN", "TSM", "TSM: flow stream", "centre prior", "random map"]
    # headers in words (dissect.report.ROWS); a column with an empty cell is shown as text at
    # 3 decimals, a full one as numbers
    pointing, accuracy = (
        t.loc["TSM: flow stream", DISSECTION_SCORES[k]] for k in ("pointing", "accuracy")
    )
    assert float(pointing) == pytest.approx(flow["pointing"], abs=5e-4)
    assert float(accuracy) == pytest.approx(metrics["flow_accuracy"], abs=5e-4)


def test_relative_flow_paths_are_read_in_the_runs_folder(app_for, video_runs):
    """The flow fields read a relative path in the runs folder, as the model fields do (not in
    the server's working folder): ``../flow.pth`` is the file beside the runs folder."""
    at = _open(app_for, video_runs, "../flow.pth", "../flow")
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert len(image_urls(at)) == 3
