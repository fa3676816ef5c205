import json

import pytest

from tests.test_tsm_apps.toy_videos import motion_videos
from tsm_apps.data.dataset import VideoDataset
from tsm_apps.train import MultigridConfig, load_config, train
from tsm_apps.train.multigrid import MultigridSchedule, long_cycle_schedule
from tsm_apps.train.solver import LRSchedule


def _schedule(**kw):
    kw = dict(dict(epoch_factor=1.0, lr_policy="cosine"), **kw)  # the table scaled to 20 epochs
    return MultigridSchedule(
        MultigridConfig(enabled=True, **kw), epochs=20, batch=4, segments=8, size=64
    )


SQ = 0.5**0.5
SLOWFAST_LONG = [[0.25, SQ], [0.5, SQ], [0.5, 1.0], [1.0, 1.0]]


def test_long_cycle_schedule_matches_slowfast_numbers_by_hand():
    # SlowFast defaults: T=8, S=224, STEPS [0, 94, 154, 196], MAX_EPOCH 239, EPOCH_FACTOR 1.
    # Batch multipliers round(8*224^2 / (T S^2)) over the short cycle (S = 112, 158.4 from the
    # BASE crop, then the long-cycle S): T=2,S=158: 16, 8, 8 (avg 32/3); T=4,S=158: 8, 4, 4
    # (16/3); T=4,S=224: 8, 4, 2 (14/3); T=8,S=224: 4, 2, 1 (7/3); sum 23. A stage of E epochs
    # gives a shape E*avg/23 epochs (E/23 iterations each): 196*4/23 iterations in all, a saving
    # of 5.75; the final phase 43/5.75*7/3 = 17.449 epochs; the table (213.449) scaled to 239.
    # Cumulative ends by hand: 48.81 73.22 94.57 105.25 | 136.41 151.99 165.62 172.43 |
    # 194.24 205.15 214.69 219.46 | 239.
    got = long_cycle_schedule([0, 94, 154, 196], 239, 8, 224, SLOWFAST_LONG, [0.5, SQ], True, 239)
    assert [e for _, _, e in got] == [49, 73, 95, 105, 136, 152, 166, 172, 194, 205, 215, 219, 239]
    assert [st for st, _, _ in got] == [0] * 4 + [1] * 4 + [2] * 4 + [3]
    assert [shape for _, shape, _ in got[:4]] == [
        (8, 2, 158),
        (4, 4, 158),
        (2, 4, 224),
        (1, 8, 224),
    ]
    assert got[-1][1] == (1, 8, 224)


def test_slowfast_epoch_factor_and_stepwise_lr_phases_by_hand():
    # SlowFast's stepwise multigrid config (T=32 there; the batch multipliers are the same for
    # T=8): EPOCH_FACTOR 1.5 scales the 239-epoch table (ends above, x 1.5) to 358.5 epochs:
    # 73.22 109.83 141.86 157.88 | 204.61 227.98 248.43 258.65 | 291.37 307.72 322.04 329.19 |
    # 358.5, rounded 73 110 142 158 | 205 228 248 259 | 291 308 322 329 | 358 (round half even).
    # init_multigrid: STEPS = [0] + ends, the last replaced by (329 + 358) // 2 = 343; LRS =
    # GAMMA^stage x the long-cycle batch (8, 4, 2, 1 per stage), the final phase split: its first
    # half keeps stage 2's last LR (0.01 x 1), the second 0.001 x 1.
    mg = MultigridSchedule(
        MultigridConfig(enabled=True, min_steps=1), epochs=239, batch=8, segments=8, size=224
    )
    assert mg.run_epochs == 358
    steps, lrs = mg.lr_steps(num_clips=240_000)
    assert list(steps) == [0, 73, 110, 142, 158, 205, 228, 248, 259, 291, 308, 322, 329, 343]
    assert lrs == pytest.approx(
        [8, 4, 2, 1, 0.8, 0.4, 0.2, 0.1, 0.08, 0.04, 0.02, 0.01, 0.01, 0.001]
    )
    assert mg.lr_scale(0, 240_000) == 1.0  # the phases carry the batch multiplier
    # BASE_LR 0.1, WARMUP_START_LR 0.01 over WARMUP_EPOCHS 34: lr_policy.get_lr_at_epoch ramps
    # to the step LR at epoch 34 (0.1 x 8): 0.01 + (0.8 - 0.01) x 17 / 34 = 0.405 at epoch 17
    lr = LRSchedule(0.1, 358, 34.0, 0.1, policy="step", steps=steps, lrs=lrs)
    assert [lr(e) for e in (0, 17, 34, 100, 200, 335, 350)] == pytest.approx(
        [0.01, 0.405, 0.8, 0.4, 0.08, 0.001, 0.0001]
    )
    # short cycle only (no long cycle): STEPS and MAX_EPOCH x EPOCH_FACTOR, one phase
    flat = MultigridSchedule(MultigridConfig(enabled=True, long_cycle=False), 20, 4, 8, 64)
    assert (flat.run_epochs, flat.lr_steps(480)) == (30, ((0.0,), (1.0,)))


def test_schedule_stages_and_short_cycle_from_the_base_crop():
    mg = _schedule()  # T=8, S=64, batch 4; table of SlowFast's steps scaled to 20 epochs
    st = mg.stages()
    assert [s[:2] for s in st][:2] == [(0, 4), (4, 6)] and st[-1][1] == 20
    assert st[0][2:] == (32, 2, 45) and st[-1][2:] == (4, 8, 64)
    # epoch 0 (T=2, S=45): short-cycle crops 32 = 64*0.5 and 45 = 64*0.707 of the BASE size,
    # batch x round((45/32)^2) = 2 and x round((45/45.25)^2) = 1; capped at 480 // 4 = 120
    assert mg.cycle(0) == [(64, 2, 32), (32, 2, 45), (32, 2, 45)]
    assert mg.batches(0, 480)[:3] == [(64, 2, 32), (32, 2, 45), (32, 2, 45)]
    # the final phase keeps the short cycle (SlowFast's sampler runs every epoch)
    assert mg.cycle(19) == [(16, 8, 32), (8, 8, 45), (4, 8, 64)]
    assert mg.lr_scale(0, 480) == 8.0 and mg.lr_scale(19, 480) == 1.0  # the cosine policy
    assert _schedule(scale_lr=False).lr_scale(0, 480) == 1.0
    assert _schedule(long_cycle=False).stages() == [(0, 20, 4, 8, 64)]


def test_bn_group_stays_at_bn_base_size():
    mg = _schedule()
    assert mg.bn_splits(0, 480) == 8 and mg.bn_splits(19, 480) == 1  # 32 clips / 4 per group
    assert _schedule(bn_base_size=8).bn_splits(0, 480) == 4
    assert _schedule(min_steps=40).bn_splits(0, 480) == 3  # batch capped at 480 // 40 = 12


def test_min_steps_caps_the_batch_and_the_lr_scale():
    mg = _schedule(min_steps=20)  # 480 clips: at most 24 a batch, LR x 24/4
    assert mg.batches(0, 480) == ([(24, 2, 32), (24, 2, 45), (24, 2, 45)] * 7)[:20]
    assert mg.lr_scale(0, 480) == 6.0
    assert len(mg.batches(19, 480)) == 17 * 3  # 16 + 8 + 4 clips a cycle, 17 cycles fit 476
    with pytest.raises(ValueError, match="min_steps"):
        MultigridConfig(min_steps=0)
    with pytest.raises(ValueError, match="steps must rise"):
        MultigridConfig(steps=[0, 50, 40])


def test_multigrid_run_changes_num_segments_without_rebuilding(tmp_path, monkeypatch):
    videos, labels = motion_videos(24, frames=8, size=32)
    tr = VideoDataset.from_tensor(videos, labels, True, 4, 32)
    va = VideoDataset.from_tensor(videos[:8], labels[:8], False, 4, 32)
    seen = []
    from tsm_apps.train import trainer

    orig = trainer.Trainer.train_step

    def spy(self, x, y):
        out = orig(self, x, y)
        seen.append((id(self.model), self.model.num_segments, tuple(x.shape)))
        return out

    monkeypatch.setattr(trainer.Trainer, "train_step", spy)
    cfg = load_config(
        arch="resnet18",
        width=0.125,
        segments=4,
        size=32,
        epochs=4,
        batch_size=2,
        lr_per_8=0.02,
        dropout=0.0,
        work_dir=str(tmp_path),
        progress=False,
        tensorboard=False,
        multigrid=MultigridConfig(enabled=True),
    )
    s = train(cfg, tr, va, 2)
    assert s["epochs"] == 6 and s["val_top1"] is not None  # 4 x the epoch factor 1.5
    assert len({m for m, _, _ in seen}) == 1  # one model object throughout
    # 6 epochs of SlowFast's table (the ends above x 6 / 358.5: 1.23 1.84 2.37 2.64 | 3.42 3.82
    # 4.16 4.33 | 4.88 5.15 5.39 5.51 | 6, rounded 1 2 2 3 | 3 4 4 4 | 5 5 5 6 | 6): epochs
    # 0-5 train T = 1, 2, 4, 2, 1, 4 (4 x 1/4, 4 x 1/2, the base 4; empty entries skipped)
    assert {t for _, t, _ in seen} == {1, 2, 4}
    assert all(shape[1] == t for _, t, shape in seen)
    assert {shape[-1] for _, _, shape in seen} >= {16, 23, 32}


def test_multigrid_flags_reach_the_config():
    from tsm_apps.train.cli import build_parser, config_from_args

    args = build_parser().parse_args(
        [
            "--data",
            "d",
            "--multigrid",
            "--mg-min-steps",
            "16",
            "--mg-no-scale-lr",
            "--mg-no-short-cycle",
        ]
    )
    mg = config_from_args(args).multigrid
    assert (mg.enabled, mg.min_steps, mg.scale_lr, mg.short_cycle) == (True, 16, False, False)
    mg = config_from_args(build_parser().parse_args(["--data", "d", "--multigrid"])).multigrid
    assert (mg.min_steps, mg.scale_lr, mg.short_cycle) == (4, True, True)
    assert mg.long_factors[0] == [0.25, 0.5**0.5]
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
