"""One checkpoint, one video, one answer: ``tsm test``, ``tsm dissect run``, the app's Attention
view and the Python API report the same frames, the same top-5 and the same probabilities (to
1e-5) for a checkpoint of each kind -- ours (its recorded protocol), the official repository's
and mmaction2's -- on real footage."""

from __future__ import annotations

import json
import shutil

import pytest
import torch

from tests.test_tsm_apps.reference_pipelines import VIDEOS as REFERENCE_VIDEOS
from tests.test_tsm_apps.reference_pipelines import official_views, responsive
from tests.test_tsm_apps.test_checkpoint import RefTSN, to_mmaction2
from tests.test_tsm_apps.test_evaluation_references import MM_CFG, OFFICIAL
from tools.sample_videos import sample_video
from tsm_apps import build_recognizer
from tsm_apps.checkpoint.reading import save_checkpoint
from tsm_apps.cli import main
from tsm_apps.data.pipeline import load_views
from tsm_apps.data.protocol import TestProtocol
from tsm_apps.data.record import VideoSource
from tsm_apps.evaluation.recognition import open_checkpoint, predict

VIDEO = "bikes.mp4"  # 640x272, 250 frames
KINDS = ("ours", "official", "mmaction2")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A runs folder with the video and one checkpoint of each kind, networks whose scores
    move with their input (BN statistics measured on real clips, the classifier scaled:
    :func:`~tests.test_tsm_apps.reference_pipelines.responsive`), so that a view that differs
    slightly (another resize backend, a shifted crop) changes the answer beyond 1e-5."""
    root = tmp_path_factory.mktemp("one") / "runs"
    (root / "videos").mkdir(parents=True)
    shutil.copyfile(sample_video(VIDEO), root / "videos" / VIDEO)
    torch.manual_seed(0)
    clips = [sample_video(v) for v in REFERENCE_VIDEOS]
    ref = responsive(RefTSN("resnet18", 20, 8), [official_views(c)[1] for c in clips])
    (root / "official").mkdir()
    torch.save(
        {"state_dict": {"module." + k: v for k, v in ref.state_dict().items()}},
        root / "official" / OFFICIAL,
    )
    (root / "mmaction2").mkdir()
    torch.save(
        {"state_dict": to_mmaction2(ref.state_dict()), "meta": {"cfg": MM_CFG}},
        root / "mmaction2" / "tsm_r18_mm.pth",
    )
    proto = TestProtocol(scale_size=128, crop_size=112, source="recorded by tsm train")
    ours = responsive(
        build_recognizer("resnet18", 20, 8, "offline", width=0.25),
        [load_views(VideoSource.of(c), proto, 8).input for c in clips],
    )
    save_checkpoint(root / "ours" / "best.pth", ours, meta={"test_protocol": proto.to_dict()})
    return root


def checkpoint(runs, kind):
    return next((runs / kind).glob("*.pth"))


def answers_of_tsm_test(ckpt, video, tmp_path) -> tuple:
    out = tmp_path / "test.json"
    assert main(["test", str(ckpt), "--data", str(video), "--out", str(out), "--no-progress"]) == 0
    pred = json.loads(out.read_text())["predictions"][0]
    return pred["frames"][0], pred["top5"]


def answers_of_dissect(ckpt, video, tmp_path) -> tuple:
    out = tmp_path / "dissect"
    assert (
        main(
            [
                "dissect",
                "run",
                "--checkpoint",
                str(ckpt),
                "--data",
                str(video),
                "--out",
                str(out),
                "--no-progress",
                "--no-units",
                "--no-sanity",
                "--no-overlays",
            ]
        )
        == 0
    )
    record = json.loads(next((out / "clips").glob("*.json")).read_text())
    return record["indices"], record["top5"]


def answers_of_api(ckpt, video) -> tuple:
    pred = predict(open_checkpoint(ckpt), video)
    return pred.indices[0].tolist(), pred.top5


def same(a: tuple, b: tuple) -> None:
    assert a[0] == b[0]
    assert [t["index"] for t in a[1]] == [t["index"] for t in b[1]]
    assert max(abs(x["prob"] - y["prob"]) for x, y in zip(a[1], b[1])) < 1e-5


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_tsm_test_dissection_and_the_api_give_one_answer(kind, runs, tmp_path):
    ckpt, video = checkpoint(runs, kind), runs / "videos" / VIDEO
    api = answers_of_api(ckpt, video)
    same(answers_of_tsm_test(ckpt, video, tmp_path), api)
    same(answers_of_dissect(ckpt, video, tmp_path), api)


OTHER_RESIZE = {"pil": "cv2", "cv2": "pil", "torch": "pil"}


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_another_resize_backend_moves_the_answer_beyond_the_tolerance(kind, runs):
    # the answers above can differ: the same frames through the other resize backend (PIL's
    # antialiased bilinear vs OpenCV's) move the fused probabilities by more than 10x 1e-5
    ckpt, video = checkpoint(runs, kind), runs / "videos" / VIDEO
    ck = open_checkpoint(ckpt)
    a = predict(ck, video)
    b = predict(open_checkpoint(ckpt, resize=OTHER_RESIZE[ck.protocol.resize]), video)
    assert a.indices.tolist() == b.indices.tolist()
    assert float((a.probs - b.probs).abs().max()) > 1e-4


def answers_of_the_app(app_for, runs, ckpt) -> tuple:
    """The Attention view ('any two checkpoints') with ``ckpt`` as model A on the video."""
    from ui_fixtures import image_captions

    at = app_for(runs).run()
    at.sidebar.radio(key="view").set_value("Attention").run()
    at.radio(key="att_mode").set_value("Any two checkpoints on any video").run()
    at.radio(key="attc_kind").set_value("Video in the runs folder").run()
    at.selectbox(key="attc_ckpt_A").set_value(str(ckpt)).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    frames = []
    for k in range(8):
        at.slider(key="attc").set_value(k).run()
        cap = image_captions(at)[0]  # "A frame k/7 (video frame N): cam of '...'"
        frames.append(int(cap.split("(video frame ")[1].split(")")[0]))
    table = at.dataframe[0].value
    names = open_checkpoint(ckpt).names
    top5 = [
        {"index": names.index(n), "prob": float(p)}
        for n, p in zip(table["class"], table["probability"])
    ]
    return frames, top5


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_the_apps_attention_view_gives_the_same_answer(kind, runs, app_for):
    ckpt, video = checkpoint(runs, kind), runs / "videos" / VIDEO
    frames, top5 = answers_of_the_app(app_for, runs, ckpt)
    api = answers_of_api(ckpt, video)
    assert frames == api[0]
    assert [t["index"] for t in top5] == [t["index"] for t in api[1]]
    assert max(abs(t["prob"] - a["prob"]) for t, a in zip(top5, api[1])) < 1e-5


@pytest.mark.slow
def test_an_upload_gets_tsm_tests_answer_at_any_working_size(runs, app_for, tmp_path):
    """A real 1280x720 clip uploaded at the default working size (``--frame-size 360``: the
    page holds it at 640x360): the Attention view's top-5 and probabilities are ``tsm test``'s
    on the file, frames included -- the model reads the file, only the display is downscaled."""
    from ui_fixtures import captions, image_captions

    video = sample_video("bigbuckbunny.mp4")  # 1280x720, 132 frames
    ckpt = checkpoint(runs, "ours")
    at = app_for(runs, TSM_UI_FRAME_SIZE="360").run()
    at.sidebar.radio(key="view").set_value("Attention").run()
    at.radio(key="att_mode").set_value("Any two checkpoints on any video").run()
    at.selectbox(key="attc_ckpt_A").set_value(str(ckpt)).run()
    at.radio(key="attc_kind").set_value("Upload a video").run()
    at.file_uploader(key="attc_upload_0").upload(video.name, video.read_bytes(), "video/mp4").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any("at 640x360, downscaled from 1280x720" in c for c in captions(at))
    frames = []
    for k in range(8):
        at.slider(key="attc").set_value(k).run()
        frames.append(int(image_captions(at)[0].split("(video frame ")[1].split(")")[0]))
    names = open_checkpoint(ckpt).names
    table = at.dataframe[0].value
    top5 = [
        {"index": names.index(n), "prob": float(p)}
        for n, p in zip(table["class"], table["probability"])
    ]
    same((frames, top5), answers_of_tsm_test(ckpt, video, tmp_path))
