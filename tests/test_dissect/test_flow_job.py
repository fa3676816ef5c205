"""``tsm dissect run --flow-checkpoint --flow-data``: flow maps stored beside the RGB ones, and
bad flow input refused in one line with exit code 2 before any work."""

import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from dissect import flow_clip_maps
from dissect.layout import load_run
from dissect.report import _summary_table
from dissect_fixtures import AS_STORED, tiny_model, write_flow_folder, write_tiny_set
from tsm_apps.checkpoint.reading import load_checkpoint, save_checkpoint
from tsm_apps.cli import main as tsm_main
from tsm_apps.data.protocol import TestProtocol

VIDEOS = [f"videos/val_{i:05d}" for i in range(3)]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = write_tiny_set(tmp_path_factory.mktemp("data"), n=3)  # 8 frames a video
    for i, rel in enumerate(VIDEOS):
        write_flow_folder(root / "flow" / rel, 7, seed=i)  # tsm flow extract's layout
    save_checkpoint(root / "rgb.pth", tiny_model("offline"), meta=AS_STORED)
    save_checkpoint(root / "flow.pth", tiny_model("offline", seed=2, in_channels=4), meta=AS_STORED)
    return root


def _args(data, out, flow="flow.pth", flow_data="flow"):
    return [
        "dissect",
        "run",
        "--checkpoint",
        str(data / "rgb.pth"),
        "--data",
        str(data),
        "--out",
        str(out),
        "--no-progress",
        "--no-units",
        "--no-sanity",
        "--flow-checkpoint",
        str(data / flow),
        "--flow-data",
        str(data / flow_data),
    ]


def test_run_stores_the_flow_maps_beside_the_rgb_maps(data, tmp_path):
    out = tmp_path / "run"
    assert tsm_main(_args(data, out) + ["--limit", "2"]) == 0
    run = load_run(out)
    assert sorted(run.clips) == ["videos__val_00000", "videos__val_00001"]
    assert run.settings["settings"]["flow_checkpoint"] == str((data / "flow.pth").resolve())
    flow_model = load_checkpoint(data / "flow.pth").eval()
    for cid, clip in run.clips.items():
        rec, arr = clip.record, clip.load_maps()
        assert rec["indices"] == [1, 3, 5, 7]  # RGB frames of 8, T = 4
        assert rec["flow"]["indices"] == [[1, 2], [3, 4], [5, 6], [6, 6]]
        assert rec["flow"]["folder"] == str((data / "flow" / VIDEOS[int(cid[-1])]).resolve())
        assert arr["flow_maps"].shape == arr["maps"].shape == (4, 64, 64)
        _, ref = flow_clip_maps(
            flow_model,
            rec["flow"]["folder"],
            rec["indices"],
            TestProtocol.from_dict(AS_STORED["test_protocol"]),
        )
        np.testing.assert_allclose(arr["flow_maps"], ref.maps[0].numpy(), rtol=1e-6, atol=1e-5)
        assert rec["flow"]["pred"] == int(np.argmax(arr["flow_logits"])) == rec["flow"]["class"]
        assert clip.flow_png is not None and clip.flow_png.stat().st_size > 0


def _first_max_in_box(m, box) -> bool:
    """The pointing game by hand: the first maximum's pixel centre inside the box."""
    y, x = divmod(int(np.argmax(m)), m.shape[1])
    return bool(box[0] <= x + 0.5 <= box[2] and box[1] <= y + 0.5 <= box[3])


def test_metrics_score_the_flow_stream_like_the_rgb_maps(data, tmp_path):
    out = tmp_path / "run"
    assert tsm_main(_args(data, out)) == 0
    run = load_run(out)
    hits = {"method": [], "flow": []}
    flow_right = []
    for clip in run.clips.values():
        arr, rec = clip.load_maps(), clip.record
        for kind, key in (("method", "maps"), ("flow", "flow_maps")):
            hits[kind] += [
                _first_max_in_box(m, b)
                for m, b in zip(arr[key], arr["boxes"])
                if not np.isnan(b).any()
            ]
        flow_right.append(rec["flow"]["pred"] == rec["label"])
    agg = run.metrics["aggregate"]
    assert len(hits["flow"]) == agg["flow"]["pointing_frames"] > 0
    for kind in hits:
        assert agg[kind]["pointing"] == pytest.approx(np.mean(hits[kind]), abs=1e-12)
    assert {"iou_dataset", "iou_max20", "pointing_tol"} <= set(agg["flow"])
    assert run.metrics["flow_accuracy"] == pytest.approx(np.mean(flow_right), abs=1e-12)
    table = _summary_table([run], ["tsm"])
    assert "tsm: flow stream" in table
    # accuracy sits under the column of the model it belongs to
    top1 = table.split("top-1 accuracy</td>")[1].split("</tr>")[0]
    cells = [c.split("</td>")[0] for c in top1.split("<td>")[1:]]
    expect = [run.metrics["accuracy"], run.metrics["flow_accuracy"], None, None]
    assert cells == ["–" if v is None else f"{v:.3f}" for v in expect]


def _one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_missing_flow_folder_exits_2_in_one_line_before_any_work(data, tmp_path):
    partial = tmp_path / "flow"
    shutil.copytree(data / "flow", partial)
    shutil.rmtree(partial / VIDEOS[1])
    out = tmp_path / "run"
    args = _args(data, out, flow_data="flow")
    args[-1] = str(partial)
    proc = subprocess.run(
        [sys.executable, "-m", "tsm_apps.cli", *args],
        capture_output=True,
        text=True,
        env=dict(os.environ, OMP_NUM_THREADS="1"),
    )
    assert proc.returncode == 2
    line = _one_error_line(proc.stderr)
    assert line == (
        f"tsm dissect: error: flow folder not found for {data / VIDEOS[1]}: "
        f"expected {partial.resolve() / VIDEOS[1]} "
        "(tsm flow extract DATA --out FLOW_DATA)"
    )
    assert not out.exists()  # nothing written


@pytest.mark.parametrize(
    "case, expected",
    [
        (
            "rgb_as_flow",
            "rgb.pth is not a flow model: it takes 3 input channels per segment, "
            "expected 2 * new_length",
        ),
        ("few_fields", "4 flow fields, but {video} has 8 frames: expected 7"),
        ("no_flow_data", "--flow-checkpoint and --flow-data go together"),
    ],
)
def test_bad_flow_input_is_one_line_and_exit_2(data, tmp_path, capsys, case, expected):
    args = _args(data, tmp_path / "run", flow="rgb.pth" if case == "rgb_as_flow" else "flow.pth")
    if case == "few_fields":
        short = tmp_path / "flow"
        shutil.copytree(data / "flow", short)
        for p in list((short / VIDEOS[2]).glob("flow_[xy]_0000[567].jpg")):
            p.unlink()
        args[-1] = str(short)
    if case == "no_flow_data":
        args = args[:-2]
    assert tsm_main(args) == 2
    line = _one_error_line(capsys.readouterr().err)
    assert expected.format(video=data / VIDEOS[2]) in line
    assert not (tmp_path / "run").exists()
