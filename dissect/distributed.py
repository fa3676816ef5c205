"""Ranks of a dissection job under ``torchrun`` or SLURM ``srun``.

The environment is read by :func:`tsm_apps.distributed.env_from` (torchrun's
``RANK/WORLD_SIZE/LOCAL_RANK``, multi-node c10d rendezvous, or SLURM's ``SLURM_PROCID/NTASKS``)
and the process group is :func:`tsm_apps.distributed.process_group` (gloo on CPU, NCCL on
GPU), as for ``tsm train``. Each rank takes the whole clips ``items[rank::world_size]`` of a
list every rank builds identically; collectives here are the identity for one process, so the
single-process job runs the same code.
"""

from __future__ import annotations

from typing import Any, List, Sequence

import numpy as np
import torch
import torch.distributed as dist

from tsm_apps.distributed import DistEnv, env_from, pick_device, process_group

__all__ = [
    "DistEnv",
    "env_from",
    "pick_device",
    "process_group",
    "shard",
    "active",
    "all_reduce_sum",
    "all_gather_objects",
    "barrier",
]


def active() -> bool:
    """True when a process group of more than one process is initialised."""
    return dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1


def shard(items: Sequence, env: DistEnv) -> List:
    """This rank's deterministic share: ``items[rank::world_size]`` (whole items)."""
    return list(items[env.rank :: env.world_size])


def _device() -> torch.device:
    if dist.get_backend() == "nccl":
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


def all_reduce_sum(values: np.ndarray) -> np.ndarray:
    """Element-wise sum over ranks of an int64 or float64 array (exact for integer counts)."""
    values = np.asarray(values)
    if values.dtype not in (np.int64, np.float64):
        raise TypeError(f"all_reduce_sum takes int64 or float64 arrays, got {values.dtype}")
    if not active():
        return values.copy()
    t = torch.from_numpy(np.ascontiguousarray(values)).to(_device())
    dist.all_reduce(t, op=dist.ReduceOp.SUM)
    return t.cpu().numpy()


def all_gather_objects(obj: Any) -> List[Any]:
    """Every rank's ``obj`` (picklable), in rank order; ``[obj]`` for one process."""
    if not active():
        return [obj]
    out: List[Any] = [None] * dist.get_world_size()
    dist.all_gather_object(out, obj)
    return out


def barrier() -> None:
    """Wait for every rank (no-op for one process)."""
    if active():
        dist.barrier()
