"""Multigrid training schedule as in SlowFast (``slowfast/utils/multigrid.py``; Wu et al. 2020).

Clip shapes ``(T, S)`` vary on a schedule while ``batch x T x S^2`` stays about constant, so
every step costs about the same and coarse shapes see many more clips per second.

* Long cycle: one cycle per LR stage (``MultigridConfig.steps``, SlowFast's ``SOLVER.STEPS``
  as fractions of the schedule). Within a stage each long-cycle shape gets epochs in proportion
  to its *short-cycle average* batch multiplier. The last phase (after ``steps[-1]``) trains
  at the base shape for ``(1 - steps[-1]) / iteration saving x its average batch`` -- the same
  iteration saving as the rest -- and the whole table is rescaled to ``epochs``.
* Short cycle (every epoch, the final phase too): steps cycle through crops of the BASE size
  times ``short_factors`` (batch x ``round((S_long / s)^2)``), then the long-cycle shape.
* Epochs: the run trains ``epochs x epoch_factor`` epochs (SlowFast ``EPOCH_FACTOR`` 1.5:
  multigrid trains more epochs in fewer iterations); ``epochs`` is the baseline's length.
* LR (``lr_policy="step"``, SlowFast ``init_multigrid`` + ``steps_with_relative_lrs``): each
  table entry is an LR phase at ``gamma^stage x`` its long-cycle batch multiplier
  (``scale_lr``); the final base-shape phase is split in half, its first half keeping the
  previous phase's LR. ``"cosine"``: the run's cosine times the batch multiplier.
* BN normalises over a constant group of ``bn_base_size`` clips (sub-batch BN: the step's batch
  split into ``bn_splits`` micro-batches).

On small data sets a batch is capped at ``num_clips // min_steps`` clips so every epoch keeps
at least ``min_steps`` steps. The recognizer's ``num_segments`` is set per batch at run time.
"""

from __future__ import annotations

from dataclasses import dataclass

from .multigrid_config import MultigridConfig

MIN_SIZE = 16


def long_cycle_schedule(
    steps: list,
    max_epoch: float,
    t: int,
    s: int,
    long_factors: list,
    short_factors: list,
    short_cycle: bool,
    total: float,
) -> list:
    """SlowFast's ``get_long_cycle_schedule``: ``[(stage, (B, T, S), end_epoch), ...]``.

    ``B`` is the batch multiplier ``round(t s^2 / (T S^2))``; ``end_epoch`` the rounded
    cumulative epoch, the table scaled so the last entry ends at ``total``
    (SlowFast: ``MAX_EPOCH x EPOCH_FACTOR``).
    """
    default = float(t * s * s)
    avg_bs, all_shapes = [], []
    for tf, sf in long_factors:
        bt, bs = max(1, int(round(t * tf))), max(1, int(round(s * sf)))  # at least 1 frame, 1 px
        shapes = (
            [[bt, s * short_factors[0]], [bt, s * short_factors[1]], [bt, bs]]
            if short_cycle
            else [[bt, bs]]
        )
        shapes = [(int(round(default / (st * ss * ss))), st, ss) for st, ss in shapes]
        avg_bs.append(sum(b for b, _, _ in shapes) / len(shapes))
        all_shapes.append(shapes)
    sched, total_iters = [], 0.0
    for i in range(len(steps) - 1):
        span = steps[i + 1] - steps[i]
        for avg, shapes in zip(avg_bs, all_shapes):
            epochs = span * avg / sum(avg_bs)
            total_iters += epochs / avg
            sched.append((i, shapes[-1], epochs))
    saving = steps[-1] / total_iters
    sched.append(
        (len(steps) - 1, all_shapes[-1][-1], (max_epoch - steps[-1]) / saving * avg_bs[-1])
    )
    x = total / sum(e for _, _, e in sched)
    out, acc = [], 0.0
    for stage, (b, st, ss), e in sched:
        acc += e * x
        out.append((stage, (b, st, int(round(ss))), int(round(acc))))
    return out


@dataclass
class MultigridSchedule:
    """A batch plan (see :mod:`tsm_apps.train.sampler`) for base ``(batch, segments, size)``."""

    cfg: MultigridConfig
    epochs: int
    batch: int  # per process, at the base shape
    segments: int
    size: int

    def table(self) -> list:
        """:func:`long_cycle_schedule` for this run, ``epochs x epoch_factor`` epochs in all
        (one base-shape entry without long cycle)."""
        total = self.epochs * self.cfg.epoch_factor
        if not self.cfg.long_cycle:
            return [(0, (1, self.segments, self.size), int(total))]
        return long_cycle_schedule(
            list(self.cfg.steps),
            self.cfg.max_epoch,
            self.segments,
            self.size,
            self.cfg.long_factors,
            self.cfg.short_factors,
            self.cfg.short_cycle,
            total,
        )

    @property
    def run_epochs(self) -> int:
        """Epochs the run trains: the table's end."""
        return self.table()[-1][-1]

    def lr_steps(self, num_clips: int) -> tuple:
        """``(steps, lrs)`` of SlowFast's ``steps_with_relative_lrs`` for this table: a phase per
        entry at ``gamma^stage x`` the (capped) batch multiplier, the last phase split in half
        (the first half at the previous phase's LR). Without long cycle: one phase at 1."""
        table = self.table()
        if not self.cfg.long_cycle:
            return (0.0,), (1.0,)
        cap = self._cap(num_clips)
        mult = [
            min(b * self.batch, cap) / self.batch if self.cfg.scale_lr else 1.0
            for _, (b, _, _), _ in table
        ]
        lrs = [self.cfg.gamma**stage * m for (stage, _, _), m in zip(table, mult)]
        ends = [end for _, _, end in table]
        steps = [0] + ends[:-1] + [(ends[-2] + ends[-1]) // 2]
        lrs = lrs[:-1] + [lrs[-2], lrs[-1]]
        return tuple(float(v) for v in steps), tuple(lrs)

    def stages(self) -> list:
        """``[(first_epoch, last_epoch_exclusive, batch, T, S)]`` of the long cycles (non-empty)."""
        out, first = [], 0
        for _, (b, t, s), end in self.table():
            if end > first:
                out.append((first, end, b * self.batch, max(1, t), max(MIN_SIZE, s)))
                first = end
        return out

    def long_shape(self, epoch: int) -> tuple:
        """``(batch, T, S)`` of ``epoch``'s long-cycle shape."""
        for first, last, b, t, s in self.stages():
            if first <= epoch < last:
                return b, t, s
        raise ValueError(f"epoch {epoch} outside the schedule's {self.epochs} epochs")

    def _cap(self, num_clips: int) -> int:
        return max(self.batch, num_clips // self.cfg.min_steps)

    def lr_scale(self, epoch: int, num_clips: int) -> float:
        """Multiplier of the cosine policy's LR: the (capped) long-cycle batch over the base
        batch (1 under the step policy, whose phases carry it: :meth:`lr_steps`)."""
        if not self.cfg.scale_lr or self.cfg.lr_policy == "step":
            return 1.0
        return min(self.long_shape(epoch)[0], self._cap(num_clips)) / self.batch

    def bn_splits(self, epoch: int, num_clips: int) -> int:
        """Sub-batch BN: micro-batches per step so a BN group holds ``bn_base_size`` clips."""
        base = self.cfg.bn_base_size or self.batch
        return max(1, min(self.long_shape(epoch)[0], self._cap(num_clips)) // base)

    def cycle(self, epoch: int) -> list:
        """The epoch's repeating step shapes ``[(batch, T, S), ...]`` (short cycle first)."""
        b, t, s = self.long_shape(epoch)
        out = [(b, t, s)]
        if self.cfg.short_cycle:
            sizes = [max(MIN_SIZE, int(round(self.size * f))) for f in self.cfg.short_factors]
            out = [
                (b * int(round((s / (self.size * f)) ** 2)), t, ss)
                for f, ss in zip(self.cfg.short_factors, sizes)
            ] + out
        return out

    def long_batches(self, epoch: int, num_clips: int) -> list:
        """The epoch's batches at its long-cycle shape only (capped), e.g. for precise BN."""
        b, t, s = self.long_shape(epoch)
        b = max(1, min(b, self._cap(num_clips)))
        return [(b, t, s)] * (num_clips // b)

    def batches(self, epoch: int, num_clips: int) -> list:
        """Shapes of the epoch's steps within ``num_clips`` (batches capped, see ``min_steps``)."""
        cap = self._cap(num_clips)
        cycle = [(max(1, min(cb, cap)), ct, cs) for cb, ct, cs in self.cycle(epoch)]
        out, used, i = [], 0, 0
        while used + cycle[i % len(cycle)][0] <= num_clips:
            out.append(cycle[i % len(cycle)])
            used += cycle[i % len(cycle)][0]
            i += 1
        return out
