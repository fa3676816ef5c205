"""Process-group set-up from the launcher's environment: torchrun (single- or multi-node c10d
rendezvous) or SLURM ``srun``; no home-made spawner.

Backend: NCCL when the process uses a CUDA device, gloo otherwise (CPU). Collectives used by the
trainer go through :class:`CommCounter` so runs can report how many all-reduce calls they made.
"""
from __future__ import annotations

import os
import re
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator, Mapping, Optional

import torch
import torch.distributed as dist
from torch import Tensor

DEFAULT_PORT = 29500


@dataclass(frozen=True)
class DistEnv:
    """Where this process sits: global ``rank`` of ``world_size``, ``local_rank`` on its node."""
    rank: int = 0
    world_size: int = 1
    local_rank: int = 0
    master_addr: str = ""
    master_port: int = 0
    launcher: str = "none"  # "torchrun" | "slurm" | "none"

    @property
    def distributed(self) -> bool:
        return self.world_size > 1

    @property
    def is_main(self) -> bool:
        return self.rank == 0


def first_host(nodelist: str) -> str:
    """First host name of a SLURM node list: ``"gpu[03-05,9],cpu1"`` -> ``"gpu03"``."""
    m = re.match(r"([^,\[]+)(?:\[([^\]]+)\])?", nodelist.strip())
    if not m or not m.group(1):
        raise ValueError(f"cannot parse SLURM node list {nodelist!r}")
    prefix, ranges = m.group(1), m.group(2)
    if not ranges:
        return prefix
    return prefix + ranges.split(",")[0].split("-")[0]


def _int(environ: Mapping[str, str], key: str) -> int:
    try:
        return int(environ[key])
    except ValueError as e:
        raise ValueError(f"environment variable {key}={environ[key]!r} is not an integer") from e


def env_from(environ: Optional[Mapping[str, str]] = None) -> DistEnv:
    """Read torchrun's ``RANK/WORLD_SIZE/LOCAL_RANK`` or SLURM's ``SLURM_PROCID/NTASKS/LOCALID``.

    torchrun takes precedence (``srun torchrun ...`` is a common pattern). Without either, a
    single process.
    """
    environ = os.environ if environ is None else environ
    if "RANK" in environ and "WORLD_SIZE" in environ:
        return DistEnv(_int(environ, "RANK"), _int(environ, "WORLD_SIZE"),
                       _int(environ, "LOCAL_RANK") if "LOCAL_RANK" in environ else 0,
                       environ.get("MASTER_ADDR", ""), int(environ.get("MASTER_PORT", 0) or 0),
                       "torchrun")
    if "SLURM_PROCID" in environ and "SLURM_NTASKS" in environ:
        addr = environ.get("MASTER_ADDR") or first_host(
            environ.get("SLURM_JOB_NODELIST") or environ.get("SLURM_NODELIST") or "localhost")
        port = int(environ.get("MASTER_PORT") or DEFAULT_PORT)
        return DistEnv(_int(environ, "SLURM_PROCID"), _int(environ, "SLURM_NTASKS"),
                       _int(environ, "SLURM_LOCALID") if "SLURM_LOCALID" in environ else 0,
                       addr, port, "slurm")
    return DistEnv()


def pick_device(requested: str, env: DistEnv) -> torch.device:
    """``"auto"``: ``cuda:<local_rank>`` when CUDA is present, else CPU."""
    if requested == "auto":
        return (torch.device("cuda", env.local_rank % torch.cuda.device_count())
                if torch.cuda.is_available() else torch.device("cpu"))
    dev = torch.device(requested)
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {requested!r} requested but CUDA is not available")
    return dev


def pick_backend(device: torch.device) -> str:
    return "nccl" if device.type == "cuda" else "gloo"


@contextmanager
def process_group(env: DistEnv, device: torch.device) -> Iterator[DistEnv]:
    """Initialise the default process group for ``env`` (no-op for one process); always torn down."""
    if not env.distributed or dist.is_initialized():
        yield env
        return
    if device.type == "cuda":
        torch.cuda.set_device(device)
    if env.launcher == "slurm":  # env:// rendezvous reads these
        os.environ.setdefault("MASTER_ADDR", env.master_addr)
        os.environ.setdefault("MASTER_PORT", str(env.master_port))
    dist.init_process_group(pick_backend(device), rank=env.rank, world_size=env.world_size)
    try:
        yield env
    finally:
        dist.destroy_process_group()


class CommCounter:
    """Counts all-reduce calls and bytes; wraps the trainer's collectives and DDP's gradient hook."""

    def __init__(self) -> None:
        self.calls = 0
        self.bytes = 0

    def all_reduce_(self, t: Tensor, op: str = "sum") -> Tensor:
        """In-place all-reduce (``op``: ``"sum"`` or ``"mean"``); identity for one process."""
        if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() == 1:
            return t
        self.calls += 1
        self.bytes += t.numel() * t.element_size()
        dist.all_reduce(t, op=dist.ReduceOp.SUM)
        if op == "mean":
            t.div_(dist.get_world_size())
        elif op != "sum":
            raise ValueError(f"op must be 'sum' or 'mean', got {op!r}")
        return t

    def ddp_hook(self, state, bucket):  # no annotations: DDP checks them against real types
        """DDP comm hook ``(state, dist.GradBucket) -> Future[Tensor]``: the default averaging
        all-reduce, counted."""
        from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook
        self.calls += 1
        self.bytes += bucket.buffer().numel() * bucket.buffer().element_size()
        return allreduce_hook(state, bucket)

    def state_dict(self) -> dict:
        return {"calls": self.calls, "bytes": self.bytes}

    def load_state_dict(self, d: dict) -> None:
        self.calls, self.bytes = int(d["calls"]), int(d["bytes"])


def world_size() -> int:
    return dist.get_world_size() if dist.is_available() and dist.is_initialized() else 1
