import json

import pytest
import torch

from tsm_apps.train import MultigridConfig, TrainConfig, train
from tsm_apps.train.clips import ClipSet
from tsm_apps.train.multigrid import MultigridSchedule
from tests.test_tsm_apps.toy_videos import motion_videos


def _schedule(**kw):
    return MultigridSchedule(MultigridConfig(enabled=True, **kw), epochs=20, batch=4, segments=8,
                             size=64)


def test_long_cycle_stages_keep_batch_x_t_x_s2_and_equal_steps():
    st = _schedule().stages()
    # 15 long-cycle epochs split 8:4:2:1 like the batches 32:16:8:4, then 5 base epochs
    assert st == [(0, 8, 32, 2, 45), (8, 12, 16, 4, 45), (12, 14, 8, 4, 64), (14, 15, 4, 8, 64),
                  (15, 20, 4, 8, 64)]
    for _, _, b, t, s in st:
        assert b * t * s * s == pytest.approx(4 * 8 * 64 * 64, rel=0.02)
    assert _schedule(long_cycle=False).stages() == [(0, 20, 4, 8, 64)]


def test_short_cycle_batches_and_lr_scale():
    mg = _schedule()
    # epoch 0: short cycle 22 px (x4 batch, capped at 480 // 4), 32 px (x2), then 45 px
    assert mg.batches(0, 480) == [(120, 2, 22), (63, 2, 32), (32, 2, 45)] * 2
    assert mg.batches(15, 480) == [(4, 8, 64)] * 120  # final epochs: base shape only
    assert mg.lr_scale(0, 480) == 8.0 and mg.lr_scale(16, 480) == 1.0
    assert _schedule(short_cycle=False).batches(0, 100) == [(25, 2, 45)] * 4
    assert _schedule(scale_lr=False).lr_scale(0, 480) == 1.0


def test_min_steps_caps_the_batch_and_the_lr_scale():
    mg = _schedule(min_steps=20)  # 480 clips: at most 24 a batch, LR x 24/4
    assert mg.batches(0, 480) == ([(24, 2, 22), (24, 2, 32), (24, 2, 45)] * 7)[:20]
    assert mg.lr_scale(0, 480) == 6.0 and mg.lr_scale(8, 480) == 4.0
    assert len(mg.batches(15, 480)) == 120
    with pytest.raises(ValueError, match="min_steps"):
        MultigridConfig(min_steps=0)


def test_multigrid_run_changes_num_segments_without_rebuilding(tmp_path, monkeypatch):
    videos, labels = motion_videos(24, frames=8, size=32)
    tr = ClipSet.from_tensor(videos, labels, True, 4, 32)
    va = ClipSet.from_tensor(videos[:8], labels[:8], False, 4, 32)
    seen = []
    from tsm_apps.train import trainer
    orig = trainer.Trainer.train_step

    def spy(self, x, y):
        out = orig(self, x, y)
        seen.append((id(self.model), self.model.num_segments, tuple(x.shape)))
        return out

    monkeypatch.setattr(trainer.Trainer, "train_step", spy)
    cfg = TrainConfig(arch="resnet18", width=0.125, segments=4, size=32, epochs=4, batch_size=2,
                      lr_per_8=0.02, dropout=0.0, work_dir=str(tmp_path), progress=False,
                      tensorboard=False, multigrid=MultigridConfig(enabled=True))
    s = train(cfg, tr, va, 2)
    assert s["epochs"] == 4 and s["val_top1"] is not None
    assert len({m for m, _, _ in seen}) == 1  # one model object throughout
    assert {t for _, t, _ in seen} == {1, 2, 4}  # T = 4 x (1/4, 1/2, 1)
    assert all(shape[1] == t for _, t, shape in seen)
    assert {shape[-1] for _, _, shape in seen} >= {16, 23, 32}


def test_multigrid_flags_reach_the_config():
    from tsm_apps.train.cli import build_parser, config_from_args

    args = build_parser().parse_args(["--data", "d", "--multigrid", "--mg-min-steps", "16",
                                      "--mg-no-scale-lr", "--mg-no-short-cycle"])
    mg = config_from_args(args).multigrid
    assert (mg.enabled, mg.min_steps, mg.scale_lr, mg.short_cycle) == (True, 16, False, False)
    mg = config_from_args(build_parser().parse_args(["--data", "d", "--multigrid"])).multigrid
    assert (mg.min_steps, mg.scale_lr, mg.short_cycle) == (4, True, True)
    assert mg.long_factors[0] == [0.25, 0.5 ** 0.5]
    args = build_parser().parse_args(["--data", "d", "--mg-long-factors", "0.5,0.7071;1,1"])
    assert config_from_args(args).multigrid.long_factors == [[0.5, 0.7071], [1.0, 1.0]]


@pytest.mark.parametrize("bad", ["0.5", "0.5,x;1,1", "0,1", "1,1.5", ""])
def test_bad_long_factors_exit_2_naming_the_format(bad, capsys):
    from tsm_apps.cli import main

    with pytest.raises(SystemExit) as e:  # argparse's usage error: exit 2, no traceback
        main(["train", "--data", "d", "--mg-long-factors", bad])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "expected 'T,S;T,S;...'" in err and "Traceback" not in err


@pytest.mark.parametrize("bad", [[[0.5]], [[0, 1]], [[1, 1.5]], [], [["x", 1]], 0.5])
def test_bad_long_factors_in_a_config_name_the_field(bad, tmp_path):
    from tsm_apps.train.config import load_config

    path = tmp_path / "cfg.json"
    path.write_text(json.dumps({"multigrid": {"long_factors": bad}}))
    with pytest.raises(ValueError, match=r"multigrid long_factors: expected \[temporal, spatial\]"):
        load_config(str(path))

