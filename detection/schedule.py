"""FGFA's solver as mmengine numbers: iterations and LR steps from the training lists' sizes,
and the SGD step of FGFA's summed gradients on DDP's mean-reduced ones.

Reference: msracver/Flow-Guided-Feature-Aggregation (the same code in Deep-Feature-Flow's
``rfcn/``), ``fgfa_rfcn/train_end2end.py`` and the VID yaml
(``experiments/fgfa_rfcn/cfgs/resnet_v1_101_flownet_imagenet_vid_rfcn_end2end_ohem.yaml``:
``lr 0.00025``, ``lr_step '1.333'``, ``end_epoch 2``, ``FLIP true``, ``gpus '0,1,2,3'``,
``BATCH_IMAGES 1``; ``config.py``: ``wd 0.0005``, ``momentum 0.9``, ``lr_factor 0.1``).

Iterations. FGFA has one roidb entry per listed image (``DET_train_30classes`` +
``VID_train_15frames``) and, with ``FLIP``, appends a mirrored copy of every entry
(``lib/dataset/imdb.py`` ``append_flipped_images``). With ``B`` = GPUs x images per GPU, an
epoch is ``len(roidb) // B`` iterations (``AnchorLoader.iter_next``: ``cur + B <= size``) and
the LR is multiplied by 0.1 after ``int(step * len(roidb) / B)`` updates for each ``step`` (in
epochs) of ``lr_step`` (``train_end2end.py``: ``lr_iters``). MXNet's scheduler lowers the LR
when ``num_update > step``, i.e. from the ``step + 1``-th update on: mmengine's ``MultiStepLR``
milestone ``step`` (iterations count from 0). For the real lists, 53,639 + 57,834 = 111,473
images, 222,946 entries with their mirrors, on 4 GPUs x 1 image: 55,736 iterations per epoch,
111,472 in 2 epochs, LR step at 74,296. FGFA counts the entries after ``filter_roidb`` drops
images without objects; :func:`fgfa_iterations` counts list lines, so on data with empty key
frames FGFA runs slightly fewer iterations.

Solver. MXNet's SGD (``rescale_grad 1.0``, ``kvstore device``) steps on the gradient *summed*
over the ``B`` images of an iteration, ``w -= lr * (sum_i g_i + wd * w)`` (momentum on top).
DDP averages them (``sum_i g_i / B``), so the same step needs ``lr_ddp = B * lr`` and
``wd_ddp = wd / B`` (``lr_ddp * wd_ddp = lr * wd``): for FGFA's 4 GPUs, lr 1e-3 and weight
decay 1.25e-4. Rule for other process counts: a run on ``P`` processes of ``N`` clips each is
FGFA's code on ``B = P * N`` GPUs (one clip = one FGFA image): lr ``2.5e-4 * B``, weight decay
``5e-4 / B``, iterations and LR steps from the lists with batch ``B`` (:func:`fgfa_solver`).
"""

from __future__ import annotations

from typing import Mapping, Optional, Sequence

# the lists FGFA trains the VID R-FCN on, in lines (FGFA's data/ILSVRC2015/ImageSets at f01243e)
VID_TRAIN_15FRAMES_LINES = 57834
DET_TRAIN_30CLASSES_LINES = 53639
FGFA_LISTS = (DET_TRAIN_30CLASSES_LINES, VID_TRAIN_15FRAMES_LINES)
FGFA_LR = 2.5e-4  # per GPU image, on gradients summed over the GPUs
FGFA_WD = 5e-4
FGFA_GPUS = 4
FGFA_EPOCHS = 2
FGFA_LR_STEPS = (1.333,)


def _positive(name: str, value: float) -> None:
    if not value > 0:
        raise ValueError(f"{name} must be > 0, got {value!r}")


def fgfa_iterations(
    list_lines: Sequence[int],
    batch: int,
    epochs: int = FGFA_EPOCHS,
    lr_steps: Sequence[float] = FGFA_LR_STEPS,
    flip: bool = True,
) -> tuple[int, list[int]]:
    """``(max_iters, milestones)`` of FGFA's schedule: ``epochs * (entries // batch)``
    iterations and ``int(step * entries / batch)`` per LR step, ``entries`` = the lists' lines,
    doubled with ``flip`` (see the module docstring)."""
    if not list_lines or any(int(n) < 0 for n in list_lines):
        raise ValueError(f"list_lines must be line counts >= 0, got {list(list_lines)}")
    _positive("batch", batch)
    _positive("epochs", epochs)
    entries = sum(int(n) for n in list_lines) * (2 if flip else 1)
    if entries < batch:
        raise ValueError(f"{entries} roidb entries make no batch of {batch}")
    milestones = [int(step * entries / batch) for step in lr_steps]
    if any(not 0 < m < epochs * (entries // batch) for m in milestones):
        raise ValueError(
            f"LR steps {list(lr_steps)} (iterations {milestones}) must fall inside "
            f"the {epochs} epochs"
        )
    return epochs * (entries // batch), milestones


def ddp_sgd(batch: int, lr: float = FGFA_LR, weight_decay: float = FGFA_WD) -> tuple[float, float]:
    """``(lr, weight_decay)`` on DDP-averaged gradients that make the step of MXNet's SGD with
    ``lr``/``weight_decay`` on gradients summed over ``batch`` images: ``batch * lr``,
    ``weight_decay / batch``."""
    _positive("batch", batch)
    return batch * lr, weight_decay / batch


def fgfa_solver(
    processes: int = FGFA_GPUS,
    clips_per_process: int = 1,
    list_lines: Optional[Sequence[int]] = None,
) -> dict:
    """FGFA's recipe run on ``processes`` x ``clips_per_process`` clips per iteration:
    ``{'batch', 'list_lines', 'lr', 'weight_decay', 'max_iters', 'milestones'}`` (the rule of
    the module docstring; ``list_lines`` default: the real DET + VID list sizes)."""
    _positive("processes", processes)
    _positive("clips_per_process", clips_per_process)
    batch = int(processes) * int(clips_per_process)
    lines = [int(n) for n in (list_lines or FGFA_LISTS)]
    lr, wd = ddp_sgd(batch)
    max_iters, milestones = fgfa_iterations(lines, batch)
    return dict(
        batch=batch,
        list_lines=lines,
        lr=lr,
        weight_decay=wd,
        max_iters=max_iters,
        milestones=milestones,
    )


def batch_note(solver: Optional[Mapping], processes: int, clips_per_process: int) -> Optional[str]:
    """One line for a run whose batch (``processes`` x ``clips_per_process``) is not the one a
    config's ``solver`` (a :func:`fgfa_solver` result) was made for, naming the rule's values
    for this run; ``None`` when they agree or the config has no ``solver``."""
    if not isinstance(solver, Mapping) or "batch" not in solver:
        return None
    batch = int(processes) * int(clips_per_process)
    if batch == int(solver["batch"]):
        return None
    r = fgfa_solver(processes, clips_per_process, solver.get("list_lines"))
    return (
        f"the config's solver is for a batch of {solver['batch']} clips, this run has "
        f"{processes} x {clips_per_process} = {batch}; FGFA's rule for it "
        f"(detection/schedule.py): lr {r['lr']:g}, weight decay {r['weight_decay']:g}, "
        f"{r['max_iters']} iterations, LR step at {r['milestones']}"
    )
