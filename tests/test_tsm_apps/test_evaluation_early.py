"""Early recognition (causality, references by hand or clip mode) and two-stream fusion."""

import pytest
import torch

from tsm_apps.data.sampling import sample_test
from tsm_apps.evaluation.early import early_recognition, seen, video_curves
from tsm_apps.evaluation.fusion import fuse, write_online
from tsm_apps.models import build_recognizer

FR = (0.1, 0.3, 0.5, 0.8, 1.0)


def _models():
    torch.manual_seed(0)
    kw = dict(num_classes=3, num_segments=4, width=0.125, dropout=0.0)
    return {
        "tsn": build_recognizer("resnet18", shift=None, **kw).eval(),
        "tsm_offline": build_recognizer("resnet18", shift="offline", **kw).eval(),
        "tsm_online": build_recognizer("resnet18", shift="online", **kw).eval(),
    }


def _frames(seed=0, f=8):
    return torch.randn(f, 3, 32, 32, generator=torch.Generator().manual_seed(seed))


def test_seen_frames():
    assert [seen(16, p) for p in (0.1, 0.5, 1.0)] == [2, 8, 16]
    assert seen(5, 0.1) == 1
    with pytest.raises(ValueError, match="fraction"):
        seen(5, 0.0)


def test_scores_at_a_fraction_use_only_the_frames_seen():
    models, x = _models(), _frames()
    base = video_curves(models, x, FR, t=4, stride=2)
    for i, p in enumerate(FR):
        n = seen(len(x), p)
        y = x.clone()
        y[n:] = 100.0  # the unseen future, wildly different
        got = video_curves(models, y, FR, t=4, stride=2)
        for k in models:
            assert torch.allclose(got[k][i], base[k][i], atol=1e-5), (k, p)
        if n < len(x):  # and the whole-video score does see the change
            assert not torch.allclose(got["tsm_offline"][-1], base["tsm_offline"][-1])


def test_scores_match_independent_references():
    models, x = _models(), _frames(1)
    curves = video_curves(models, x, FR, t=4, stride=2)
    tsn = models["tsn"]
    tsn.num_segments = 1  # TSN at n frames: the mean of one-frame predictions
    one = torch.stack([tsn(x[i][None, None])[0] for i in range(len(x))])
    with torch.no_grad():
        assert torch.allclose(curves["tsn"][1], one[: seen(8, 0.3)].mean(0), atol=1e-5)
        off = models["tsm_offline"]
        off.num_segments = 4  # offline TSM at p=0.5: 4 frames sampled from the first 4
        ref = off(x[torch.as_tensor(sample_test(4, 4))][None])[0]
        assert torch.allclose(curves["tsm_offline"][2], ref, atol=1e-5)
        on = models["tsm_online"]
        on.num_segments = 4  # online TSM on the whole video: clip mode over frames 1, 3, 5, 7
        assert torch.allclose(curves["tsm_online"][-1], on(x[1::2][None])[0], atol=1e-5)


def test_early_recognition_accuracy_and_files(tmp_path):
    models = _models()
    videos = [(_frames(s), s % 3) for s in range(3)]
    res = early_recognition(models, videos, FR, t=4, stride=2)
    assert res["videos"] == 3 and res["fractions"] == list(FR)
    for k, curve in res["top1"].items():
        labels = [lab for _, lab in videos]
        for i in range(len(FR)):
            hits = [
                int(video_curves({k: models[k]}, f, FR, 4, 2)[k][i].argmax() == lab)
                for (f, _), lab in zip(videos, labels)
            ]
            assert curve[i] == pytest.approx(100 * sum(hits) / 3)
    write_online(res, tmp_path)
    lines = (tmp_path / "early.csv").read_text().splitlines()
    assert lines[0] == "fraction,tsn,tsm_offline,tsm_online" and len(lines) == 6
    assert (tmp_path / "early.html").stat().st_size > 0


def test_fuse_by_hand():
    rgb, flow = torch.tensor([[0.6, 0.4]]), torch.tensor([[0.2, 0.8]])
    # 1:1.5 -> ((0.6 + 0.3) / 2.5, (0.4 + 1.2) / 2.5) = (0.36, 0.64)
    assert torch.allclose(fuse(rgb, flow, (1, 1.5)), torch.tensor([[0.36, 0.64]]))
    assert torch.allclose(fuse(rgb, flow), torch.tensor([[0.4, 0.6]]))
    with pytest.raises(ValueError, match="same videos"):
        fuse(rgb, flow[:, :1])
