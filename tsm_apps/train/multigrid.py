"""Multigrid training schedule ("A Multigrid Method for Efficiently Training Video Models").

Clip shapes ``(T, S)`` vary on a schedule while ``batch x T x S^2`` stays about constant, so
every step costs about the same and coarse shapes see many more clips per second.

* Long cycle: the long-cycle epochs (all but the last ``final_fraction``) are split into
  ``cycles`` cycles; each cycle walks the ``(temporal, spatial)`` factors coarsest first and
  gives each shape epochs in proportion to its batch, i.e. the same number of steps.
  The learning rate scales linearly with the long-cycle batch (``scale_lr``).
* Short cycle: within long-cycle epochs, consecutive steps cycle through the spatial factors
  ``short_factors`` and then the long-cycle shape itself, with the batch grown by ``(S/s)^2``.
* The last ``final_fraction`` of the epochs trains at the base shape, matching evaluation.

On small data sets a batch is capped at ``num_clips // min_steps`` clips so every epoch keeps
at least ``min_steps`` steps (``MultigridConfig.min_steps``). The recognizer's ``num_segments`` is set per batch at run time.
"""
from __future__ import annotations

from dataclasses import dataclass

from .config import MultigridConfig

MIN_SIZE = 16


def _allocate(total: int, weights: list) -> list:
    """Split ``total`` integer epochs in proportion to ``weights`` (largest remainder)."""
    raw = [total * w / sum(weights) for w in weights]
    out = [int(r) for r in raw]
    for i in sorted(range(len(raw)), key=lambda i: raw[i] - out[i], reverse=True):
        if sum(out) == total:
            break
        out[i] += 1
    return out


@dataclass
class MultigridSchedule:
    """A batch plan (see :mod:`tsm_apps.train.sampler`) for base ``(batch, segments, size)``."""
    cfg: MultigridConfig
    epochs: int
    batch: int  # per process, at the base shape
    segments: int
    size: int

    def shape(self, t_factor: float, s_factor: float) -> tuple:
        """``(batch, T, S)`` for the factors, batch scaled to keep ``batch x T x S^2``."""
        t = max(1, int(round(self.segments * t_factor)))
        s = max(MIN_SIZE, int(round(self.size * s_factor)))
        b = max(1, int(round(self.batch * self.segments * self.size ** 2 / (t * s * s))))
        return b, t, s

    def stages(self) -> list:
        """``[(first_epoch, last_epoch_exclusive, batch, T, S)]`` covering all epochs."""
        long_epochs = round(self.epochs * (1 - self.cfg.final_fraction)) if self.cfg.long_cycle \
            else 0
        shapes = [self.shape(tf, sf) for tf, sf in self.cfg.long_factors]
        out, e = [], 0
        per_cycle = _allocate(long_epochs, [1] * self.cfg.cycles) if long_epochs else []
        for n in per_cycle:
            for n_shape, (b, t, s) in zip(_allocate(n, [b for b, _, _ in shapes]), shapes):
                if n_shape:
                    out.append((e, e + n_shape, b, t, s))
                    e += n_shape
        out.append((e, self.epochs, self.batch, self.segments, self.size))
        return out

    def long_shape(self, epoch: int) -> tuple:
        """``(batch, T, S, in_long_cycle)`` of ``epoch``."""
        stages = self.stages()
        for i, (first, last, b, t, s) in enumerate(stages):
            if first <= epoch < last:
                return b, t, s, i < len(stages) - 1
        raise ValueError(f"epoch {epoch} outside the schedule's {self.epochs} epochs")

    def lr_scale(self, epoch: int, num_clips: int) -> float:
        """Learning-rate multiplier: the long-cycle batch over the base batch."""
        if not self.cfg.scale_lr:
            return 1.0
        b, _, _, _ = self.long_shape(epoch)
        return min(b, self._cap(num_clips)) / self.batch

    def _cap(self, num_clips: int) -> int:
        return max(self.batch, num_clips // self.cfg.min_steps)

    def batches(self, epoch: int, num_clips: int) -> list:
        """Shapes of the epoch's steps, long cycle plus short cycle, within ``num_clips``."""
        b, t, s, in_long = self.long_shape(epoch)
        cycle = [(b, t, s)]
        if in_long and self.cfg.short_cycle:
            cycle = [(int(round(b * (s / max(MIN_SIZE, round(s * f))) ** 2)), t,
                      max(MIN_SIZE, int(round(s * f)))) for f in self.cfg.short_factors] + cycle
        cap = self._cap(num_clips)
        cycle = [(min(cb, cap), ct, cs) for cb, ct, cs in cycle]
        out, used, i = [], 0, 0
        while used + cycle[i % len(cycle)][0] <= num_clips:
            out.append(cycle[i % len(cycle)])
            used += cycle[i % len(cycle)][0]
            i += 1
        return out
