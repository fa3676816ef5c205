"""FGFA's schedule and solver on DDP (detection/schedule.py) against values worked out by hand
from FGFA's train_end2end.py: ``lr_iters = int(epoch * len(roidb) / batch_size)``, an epoch of
``len(roidb) // batch_size`` iterations, the roidb doubled by ``append_flipped_images``."""

import pytest
import torch

from detection.schedule import batch_note, ddp_sgd, fgfa_iterations, fgfa_solver


def test_real_lists_on_four_gpus():
    # (53,639 + 57,834) x 2 = 222,946 entries; 222,946 // 4 = 55,736 per epoch, 2 epochs;
    # 1.333 * 222,946 / 4 = 297,187.018 / 4 = 74,296.75 -> 74,296
    assert fgfa_iterations([53639, 57834], batch=4) == (111472, [74296])
    s = fgfa_solver()
    assert s == dict(
        batch=4,
        list_lines=[53639, 57834],
        lr=pytest.approx(1e-3),
        weight_decay=pytest.approx(1.25e-4),
        max_iters=111472,
        milestones=[74296],
    )


def test_without_flip_and_other_batches():
    # 111,473 // 4 = 27,868 per epoch; 1.333 * 111,473 / 4 = 37,148.37
    assert fgfa_iterations([53639, 57834], batch=4, flip=False) == (55736, [37148])
    # 8 = 2 processes x 4 clips: 222,946 // 8 = 27,868; 1.333 * 222,946 / 8 = 37,148.37
    s = fgfa_solver(processes=2, clips_per_process=4)
    assert (s["max_iters"], s["milestones"]) == (55736, [37148])
    assert (s["lr"], s["weight_decay"]) == (pytest.approx(2e-3), pytest.approx(6.25e-5))
    # one process: 222,946 iterations per epoch; 1.333 * 222,946 = 297,187.018
    s = fgfa_solver(processes=1)
    assert (s["max_iters"], s["milestones"], s["lr"], s["weight_decay"]) == (
        445892,
        [297187],
        pytest.approx(2.5e-4),
        pytest.approx(5e-4),
    )
    assert fgfa_iterations([10, 3], batch=4, epochs=3, lr_steps=(1.0, 2.5)) == (18, [6, 16])


def test_ddp_mean_step_equals_mxnet_summed_step():
    """One SGD step with momentum on 4 images' gradients: MXNet's update on the sum
    (``mom = 0.9 mom - lr (sum g + wd w); w += mom``) equals torch's SGD on the mean with
    ``ddp_sgd(4)``."""
    g = torch.tensor(
        [[0.3, -1.2, 0.5], [0.1, 0.4, -0.2], [-0.6, 0.2, 0.9], [1.1, 0.0, 0.3]], dtype=torch.float64
    )
    w0 = torch.tensor([0.7, -0.4, 2.0], dtype=torch.float64)
    w, mom = w0.clone(), torch.zeros(3, dtype=torch.float64)
    for _ in range(3):  # MXNet sgd, rescale_grad 1.0
        mom = 0.9 * mom - 2.5e-4 * (g.sum(0) + 5e-4 * w)
        w = w + mom
    p = torch.nn.Parameter(w0.clone())
    lr, wd = ddp_sgd(4)
    opt = torch.optim.SGD([p], lr=lr, momentum=0.9, weight_decay=wd)
    for _ in range(3):
        p.grad = g.mean(0).clone()
        opt.step()
    assert torch.allclose(p.detach(), w, rtol=0, atol=1e-14)


def test_batch_note_names_the_rule_for_the_run():
    solver = fgfa_solver()
    assert batch_note(solver, 4, 1) is None and batch_note(None, 1, 1) is None
    note = batch_note(solver, 2, 1)
    assert note == (
        "the config's solver is for a batch of 4 clips, this run has 2 x 1 = 2; "
        "FGFA's rule for it (detection/schedule.py): lr 0.0005, weight decay 0.00025, "
        "222946 iterations, LR step at [148593]"
    )


def test_bad_arguments():
    with pytest.raises(ValueError, match="batch must be > 0"):
        fgfa_iterations([10], batch=0)
    with pytest.raises(ValueError, match=r"line counts >= 0, got \[-1\]"):
        fgfa_iterations([-1], batch=4)
    with pytest.raises(ValueError, match="make no batch of 4"):
        fgfa_iterations([1], batch=4)
    with pytest.raises(ValueError, match=r"LR steps \[2.5\] .* inside the 2 epochs"):
        fgfa_iterations([100], batch=4, lr_steps=(2.5,))
    with pytest.raises(ValueError, match="processes must be > 0"):
        fgfa_solver(processes=0)
