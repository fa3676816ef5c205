"""``tsm bench``'s detection figures: what the timed calls do (the times are benchmarks, not tests).

The training step is held to one iteration written out here the way mmengine's runner does it
(preprocess, losses on the key frame, sum of the ``loss`` terms, backward, gradient-norm clip
at the config's 10, AdamW with the config's betas and weight decay at learning rate 0), and the
per-frame figure's shift-cache bytes to a count by hand."""

from __future__ import annotations

import copy

import torch

from detection import bench
from detection.inference import CONFIG_DIR

SIZE = (128, 160)  # (H, W): tsm synth vid's frames, the quick figures' size


def _cfg():
    return bench.bench_config(CONFIG_DIR / "rfcn_synth_tsm.py")


def test_training_clip_is_one_clip_of_one_video_keyed_on_its_last_frame():
    cfg = _cfg()
    tsm, _ = bench.twin_models(cfg, "cpu")
    data = bench.training_clip(tsm, SIZE, 4)
    frames, samples = data["inputs"], data["data_samples"]
    assert len(frames) == len(samples) == 4 == tsm.clip_len
    assert all(f.dtype == torch.uint8 and f.shape == (3, 128, 160) for f in frames)
    assert [s.metainfo["clip_key"] for s in samples] == [False, False, False, True]
    assert [s.metainfo["frame_id"] for s in samples] == [0, 1, 2, 3]
    assert {s.metainfo["video"] for s in samples} == {"bench"}
    for s in samples:
        b = s.gt_instances.bboxes
        assert s.gt_instances.labels.tolist() == [0, 3]
        assert (b[:, 0] < b[:, 2]).all() and (b[:, 1] < b[:, 3]).all()
        assert b[:, [0, 2]].max() <= 160 and b[:, [1, 3]].max() <= 128 and b.min() >= 0
    # the models share their weights: the shift adds no parameters
    _, tsn = bench.twin_models(cfg, "cpu")
    for (n, a), (_, b) in zip(tsm.state_dict().items(), tsn.state_dict().items()):
        assert torch.equal(a, b), n


def _by_hand(model, data) -> torch.optim.Optimizer:
    """One runner iteration of the synthetic config at learning rate 0, written out."""
    batch = model.data_preprocessor(copy.deepcopy(data), True)
    losses = model.loss(batch["inputs"], batch["data_samples"])
    total = sum((sum(v) if isinstance(v, list) else v) for k, v in losses.items() if "loss" in k)
    opt = torch.optim.AdamW(model.parameters(), lr=0.0, weight_decay=0.0001)
    opt.zero_grad()
    total.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=10, norm_type=2)
    opt.step()
    return opt


def test_training_step_is_one_runner_iteration_at_rate_zero():
    cfg = _cfg()
    tsm, _ = bench.twin_models(cfg, "cpu")
    ref = copy.deepcopy(tsm)
    before = {k: v.clone() for k, v in tsm.state_dict().items()}
    step = bench.TrainingStep(tsm, cfg, SIZE)
    torch.manual_seed(1)  # the RPN's random sampler
    out = step()
    assert set(out) >= {"loss", "loss_rpn_cls", "loss_cls", "loss_bbox"}
    ref.train()
    torch.manual_seed(1)
    opt = _by_hand(ref, bench.training_clip(ref, SIZE, 4))
    # the same weights (unchanged at rate 0) and BatchNorm statistics (moved by the forward)
    stats = 0
    for (n, a), (_, b) in zip(tsm.state_dict().items(), ref.state_dict().items()):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6, msg=n)
        stats += "running_mean" in n and not torch.equal(a, before[n])
    assert stats > 10
    for n, p in tsm.named_parameters():
        assert torch.equal(p, before[n]), n
    # the config's wrapper (its gradients here are under the clip's norm, so the clip is checked
    # as set), and the update ran in full: AdamW's moments, parameter by parameter
    assert step.optim_wrapper.clip_grad_kwargs == dict(max_norm=10, norm_type=2)
    mine = step.optim_wrapper.optimizer.state
    params = dict(ref.named_parameters())
    moments = 0
    for n, p in tsm.named_parameters():
        if p in mine:
            want = opt.state[params[n]]
            torch.testing.assert_close(mine[p]["exp_avg"], want["exp_avg"], msg=n)
            torch.testing.assert_close(mine[p]["exp_avg_sq"], want["exp_avg_sq"], msg=n)
            moments += bool(mine[p]["exp_avg"].abs().sum() > 0)
    assert moments > 50


def test_online_cache_bytes_are_the_shifted_folds_of_one_frame():
    cfg = _cfg()
    tsm, _ = (m.eval() for m in bench.twin_models(cfg, "cpu"))
    bench.frame_step(tsm, SIZE, "cpu")()
    # ResNet-18 at width 1/4 (16-32-64-128), stride 8 (res4, res5 dilated), a 128x160 frame:
    # every block's conv1 input keeps 1/8 of its channels, fp32. Stage 1 at 32x40: two blocks
    # of 16 channels; stage 2: its first block's input at 32x40 (16 ch), its second at 16x20
    # (32 ch); stages 3 and 4 at 16x20: inputs of 32, 64, 64 and 128 channels.
    folds = [2 * 32 * 40] * 2 + [2 * 32 * 40, 4 * 16 * 20] + [4 * 320, 8 * 320, 8 * 320, 16 * 320]
    assert tsm.test_stream.cache_bytes == 4 * sum(folds) == 81920
