"""Batch jobs end to end on a tiny annotated set: resumability, skips, bad input, reports."""

import json
import re

import numpy as np
import plotly  # noqa: F401  (required packages: a missing one fails, never skips)
import pytest
import tqdm  # noqa: F401

from dissect.cli import main  # noqa: E402
from dissect.job import run_job  # noqa: E402
from dissect.job_config import JobConfig  # noqa: E402
from dissect.layout import load_run  # noqa: E402
from dissect.metrics import has_box, pointing_hits  # noqa: E402
from dissect_fixtures import AS_STORED, tiny_model, write_tiny_set  # noqa: E402
from tsm_apps.checkpoint.reading import save_checkpoint  # noqa: E402
from tsm_apps.cli import main as tsm_main  # noqa: E402


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = write_tiny_set(tmp_path_factory.mktemp("data"), n=4, corrupt=2)
    save_checkpoint(root / "tsm" / "best.pth", tiny_model("offline"), meta=AS_STORED)
    save_checkpoint(root / "tsn" / "best.pth", tiny_model(None, seed=1), meta=AS_STORED)
    return root


def _args(data, out, *extra, ckpt="tsm"):
    return [
        "run",
        "--checkpoint",
        str(data / ckpt / "best.pth"),
        "--data",
        str(data),
        "--out",
        str(out),
        "--no-progress",
        "--unit-clips",
        "2",
        *extra,
    ]


def _mtimes(out):
    return {
        p.relative_to(out): p.stat().st_mtime_ns
        for p in out.rglob("*")
        if p.parent.name in ("maps", "overlays", "clips")
    }


def test_rerun_skips_finished_clips_and_rewrites_nothing(data, tmp_path, capsys):
    out = tmp_path / "run"
    assert main(_args(data, out, "--limit", "2")) == 0
    first = _mtimes(out)
    assert len(first) == 2 * 4  # npz, png, gif, record per clip
    assert main(_args(data, out, "--limit", "2")) == 0
    assert "0 processed, 2 skipped (already done), 0 failed" in capsys.readouterr().out
    assert _mtimes(out) == first
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["counts"]["done"] == 2 and metrics["counts"]["skipped_existing"] == 2


def test_unreadable_clip_is_a_counted_logged_skip(data, tmp_path):
    out = tmp_path / "run"
    cfg = JobConfig(
        checkpoint=str(data / "tsm" / "best.pth"), data=str(data), out=str(out), unit_clips=2
    )
    res = run_job(cfg, progress=False)
    assert (res.total, res.done, res.skipped, len(res.failed)) == (4, 3, 0, 1)
    assert res.failed[0][0] == "videos__val_00002"
    assert (
        "skipped" in (out / "job.log").read_text() and "val_00002" in (out / "job.log").read_text()
    )
    run = load_run(out)
    assert sorted(run.clips) == ["videos__val_00000", "videos__val_00001", "videos__val_00003"]
    m = run.metrics
    assert m["counts"]["failed"] == 1 and set(m["aggregate"]) == {
        "method",
        "centre",
        "random",
        "sanity",
    }
    agg = m["aggregate"]["method"]
    assert agg["pointing_frames"] == 3 * 4 and 0 <= agg["pointing"] <= 1
    assert m["threshold"]["dataset_values"]["method"] is not None
    # the pointing game with its standard tolerance (15 px at 224 = 4.29 px at 64), recomputed
    hits = []
    for cid, clip in sorted(run.clips.items()):
        arr = clip.load_maps()
        got = pointing_hits(arr["maps"], arr["boxes"], 15 * 64 / 224)
        present = has_box(arr["boxes"])
        assert m["clips"][cid]["scores"]["method"]["pointing_tol"] == [
            bool(h) if p else None for h, p in zip(got, present)
        ]
        hits += got[present].tolist()
    assert (
        agg["pointing_tol"] == pytest.approx(np.mean(hits))
        and agg["pointing_tol"] >= agg["pointing"]
    )
    maps = run.clips["videos__val_00000"].load_maps()
    assert maps["maps"].shape == (4, 64, 64) and maps["boxes"].shape == (4, 4)
    assert set(run.units["layers"]) == {f"backbone.layer{i}" for i in range(1, 5)}
    html = (out / "report.html").read_text()
    assert "Plotly.newPlot" in html and len(html) > 1_000_000  # plotly.js inlined
    assert re.search(r"<script[^>]*src=[\"']https?:", html) is None  # nothing from a CDN


def test_bad_input_errors(data, tmp_path, capsys):
    save_checkpoint(
        data / "three.pth",
        __import__("tsm_apps").build_recognizer(
            "resnet18", num_classes=3, num_segments=4, width=0.125
        ),
    )
    args = _args(data, tmp_path / "a")
    args[2] = str(data / "three.pth")
    assert tsm_main(["dissect", *args]) == 2
    assert "does not match the data: the model has 3 classes" in capsys.readouterr().err
    assert tsm_main(["dissect", *_args(data, tmp_path / "b", "--class-index", "9")]) == 2
    assert "--class-index 9 out of range" in capsys.readouterr().err
    ck = __import__("torch").load(data / "tsm" / "best.pth", weights_only=True)
    ck["state_dict"]["fc.weight"] = ck["state_dict"]["fc.weight"][:3]
    __import__("torch").save(ck, data / "cut.pth")
    args[2] = str(data / "cut.pth")
    assert tsm_main(["dissect", *args]) == 2
    assert "does not match the model" in capsys.readouterr().err
    (data / "junk.pth").write_bytes(b"junk")
    args[2] = str(data / "junk.pth")
    assert tsm_main(["dissect", *args]) == 2
    assert "junk.pth: not a PyTorch checkpoint" in capsys.readouterr().err


def test_resume_with_other_settings_is_refused(data, tmp_path):
    out = tmp_path / "run"
    assert main(_args(data, out, "--limit", "1", "--no-units")) == 0
    with pytest.raises(ValueError, match="other settings"):
        main(_args(data, out, "--limit", "1", "--method", "gradcam"))


def test_compare_tsm_vs_tsn(data, tmp_path):
    for name in ("tsm", "tsn"):
        assert main(_args(data, tmp_path / name, "--limit", "2", ckpt=name)) == 0
    assert (
        main(
            [
                "compare",
                str(tmp_path / "tsm"),
                str(tmp_path / "tsn"),
                "--out",
                str(tmp_path / "cmp"),
                "--names",
                "TSM",
                "TSN",
            ]
        )
        == 0
    )
    table = json.loads((tmp_path / "cmp" / "compare.json").read_text())
    assert set(table["runs"]) == {"TSM", "TSN"} and set(table["baselines"]) == {"centre", "random"}
    recs = [
        json.loads((tmp_path / n / "metrics.json").read_text())["clips"] for n in ("tsm", "tsn")
    ]
    ok = [c for c in recs[0] if all(r[c]["pred"] == r[c]["label"] for r in recs)]
    assert table["both_correct"]["clips"] == len(ok)
    assert set(table["both_correct"]["pointing"]) == {"TSM", "TSN"}
    html = (tmp_path / "cmp" / "compare.html").read_text()
    assert "TSM" in html and "TSN" in html and html.count("<img") == 4


def test_a_killed_run_keeps_finished_clips_and_resumes(data, tmp_path, monkeypatch):
    import dissect.job as job

    out = tmp_path / "run"
    real, calls = job.write_gif, []

    def dies_on_second(*a, **k):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*a, **k)

    monkeypatch.setattr(job, "write_gif", dies_on_second)
    cfg = JobConfig(
        checkpoint=str(data / "tsm" / "best.pth"),
        data=str(data),
        out=str(out),
        limit=2,
        units=False,
    )
    with pytest.raises(KeyboardInterrupt):
        run_job(cfg, progress=False)
    assert [p.name for p in (out / "clips").iterdir()] == ["videos__val_00000.json"]
    assert not list(out.rglob("*.tmp"))
    monkeypatch.setattr(job, "write_gif", real)
    res = run_job(cfg, progress=False)
    assert (res.done, res.skipped, res.failed) == (1, 1, [])


def test_temporary_files_of_a_killed_write_are_not_clips(tmp_path):
    from dissect.layout import DissectionLayout

    lay = DissectionLayout(tmp_path)
    (tmp_path / "clips").mkdir()
    (tmp_path / "clips" / "a.json").write_text("{}")
    (tmp_path / "clips" / ".b.x1y2.tmp.json").write_text("{")  # atomic_path's temp name
    assert lay.done_ids() == ["a"]
