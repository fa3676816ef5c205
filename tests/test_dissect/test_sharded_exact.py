"""Data-set-level thresholds and unit levels over clips split between "ranks" equal the
single-process values exactly. Two threads stand in for two processes: their reduce/gather
meet at a barrier (the real collectives are exercised by test_dissect_distributed.py)."""

import threading

import numpy as np

from dissect.threshold import dataset_keep_fraction_threshold, keep_fraction_thresholds
from dissect.units import dissect_layer
from dissect.units_sharded import dissect_layer_sharded


class _TwoRanks:
    """all-reduce (sum) and all-gather between two threads."""

    def __init__(self) -> None:
        self.barrier = threading.Barrier(2)
        self.slots = [None, None]

    def _exchange(self, rank, value):
        self.slots[rank] = value
        self.barrier.wait()
        got = list(self.slots)
        self.barrier.wait()
        return got

    def reduce(self, rank):
        return lambda a: sum(self._exchange(rank, a))

    def gather(self, rank):
        return lambda obj: self._exchange(rank, obj)


def _run_two(fn):
    out = [None, None]
    threads = [threading.Thread(target=lambda r=r: out.__setitem__(r, fn(r))) for r in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


def _maps(n=7, seed=0):
    rng = np.random.default_rng(seed)
    maps = [
        (rng.standard_normal((3, 5, 6)) * 10.0 ** rng.integers(-2, 3)).astype(np.float32)
        for _ in range(n)
    ]
    maps[1][:] = 0.25  # ties across a whole clip
    return maps


def test_keep_fraction_threshold_is_np_partition_for_any_split():
    maps = _maps()
    comm = _TwoRanks()
    for keep in (0.2, 0.5, 0.013, 1.0):
        want = dataset_keep_fraction_threshold(maps, keep)  # np.partition, one process
        one = keep_fraction_thresholds(lambda: ({"m": m} for m in maps), ["m", "e"], keep)
        assert one == {"m": want}  # "e": no values, left out
        two = _run_two(
            lambda r: keep_fraction_thresholds(
                lambda: ({"m": m} for m in maps[r::2]), ["m"], keep, comm.reduce(r)
            )
        )
        assert two == [{"m": want}, {"m": want}]


def test_keep_fraction_threshold_hand_value():
    # 10 values 1..10 split 4 / 6; keep 20% -> the 2nd largest: 9
    a, b = np.arange(1, 5, dtype=np.float32), np.arange(5, 11, dtype=np.float32)
    comm = _TwoRanks()
    got = _run_two(
        lambda r: keep_fraction_thresholds(lambda: [{"m": (a, b)[r]}], ["m"], 0.2, comm.reduce(r))
    )
    assert got == [{"m": 9.0}, {"m": 9.0}]


def test_unit_dissection_split_between_ranks_equals_one_process():
    rng = np.random.default_rng(1)
    acts = rng.standard_normal((9, 5, 3, 4)).astype(np.float32)
    masks = rng.random((9, 12, 16)) > 0.6
    for q in (0.005, 0.25):
        want = dissect_layer(acts, masks, q)  # np.quantile over all values
        comm = _TwoRanks()
        got = _run_two(
            lambda r: dissect_layer_sharded(
                acts[r::2], masks[r::2], comm.gather(r), comm.reduce(r), q
            )
        )
        assert got[0] == want and got[1] == want
    comm = _TwoRanks()  # a rank without clips
    got = _run_two(
        lambda r: dissect_layer_sharded(
            acts if r == 0 else None,
            masks if r == 0 else None,
            comm.gather(r),
            comm.reduce(r),
            0.25,
        )
    )
    assert got[1] == dissect_layer(acts, masks, 0.25)
