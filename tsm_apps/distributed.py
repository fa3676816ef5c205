"""Process-group set-up from the launcher's environment: torchrun (single- or multi-node c10d
rendezvous) or SLURM ``srun``; no home-made spawner.

Backend: NCCL when the process uses a CUDA device, gloo otherwise (CPU). Collectives used by the
trainer go through :class:`CommCounter` so runs can report how many all-reduce calls they made.

Elastic restarts: torchrun's agent hosts the store at ``MASTER_ADDR:MASTER_PORT``
(``TORCHELASTIC_USE_AGENT_STORE=True``) and keeps that same server, with every key written into
it, across ``--max-restarts`` attempts (torch 2.14.1: ``static_tcp_rendezvous.py`` creates it
once; ``dynamic_rendezvous.py`` only while ``_bootstrap_store_info is None``). The process group's
keys (``default_pg/0//cpu/...``: each rank's gloo address, NCCL's unique id) are the same in every
attempt, so a restarted rank that reads a peer's key before that peer has rewritten it gets the
killed attempt's address: ``Gloo connectFullMesh failed ... Connection refused``
(pytorch/pytorch#135712). :func:`attempt_store` gives each attempt a namespace of its own.
"""

from __future__ import annotations

import os
import re
import secrets
import socket
import time
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from typing import Iterator, Mapping, Optional, Tuple

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
    agent_store: bool = False  # torchrun's agent hosts the store at master_addr:master_port

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
        return DistEnv(
            _int(environ, "RANK"),
            _int(environ, "WORLD_SIZE"),
            _int(environ, "LOCAL_RANK") if "LOCAL_RANK" in environ else 0,
            environ.get("MASTER_ADDR", ""),
            int(environ.get("MASTER_PORT", 0) or 0),
            "torchrun",
            environ.get("TORCHELASTIC_USE_AGENT_STORE") == "True",
        )
    if "SLURM_PROCID" in environ and "SLURM_NTASKS" in environ:
        addr = environ.get("MASTER_ADDR") or first_host(
            environ.get("SLURM_JOB_NODELIST") or environ.get("SLURM_NODELIST") or "localhost"
        )
        port = int(environ.get("MASTER_PORT") or DEFAULT_PORT)
        return DistEnv(
            _int(environ, "SLURM_PROCID"),
            _int(environ, "SLURM_NTASKS"),
            _int(environ, "SLURM_LOCALID") if "SLURM_LOCALID" in environ else 0,
            addr,
            port,
            "slurm",
        )
    return DistEnv()


def pick_device(requested: str, env: DistEnv) -> torch.device:
    """``"auto"``: ``cuda:<local_rank>`` when CUDA is present, else CPU."""
    if requested == "auto":
        return (
            torch.device("cuda", env.local_rank % torch.cuda.device_count())
            if torch.cuda.is_available()
            else torch.device("cpu")
        )
    dev = torch.device(requested)
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {requested!r} requested but CUDA is not available")
    return dev


def auto_device() -> torch.device:
    """This process's CUDA device when CUDA is present, else CPU (``pick_device("auto")``)."""
    return pick_device("auto", env_from())


def pick_backend(device: torch.device) -> str:
    return "nccl" if device.type == "cuda" else "gloo"


ATTEMPT_KEY = "tsm_apps/attempt"  # key in the agent's store: "PORT NONCE" of the live attempt


def attempt_store(
    env: DistEnv, timeout: timedelta = dist.default_pg_timeout, probe_s: float = 2.0
) -> Tuple[dist.Store, Optional[dist.TCPStore]]:
    """This attempt's own namespace in the agent's store, and (rank 0) a beacon to keep alive.

    Rank 0 draws a random nonce, starts a small ``TCPStore`` (the beacon) on a free port holding
    it, and publishes ``"PORT NONCE"`` under :data:`ATTEMPT_KEY` in the agent's store. The other
    ranks read that key, which may still be the killed attempt's: they accept it only if its
    beacon answers with that nonce (a dead attempt's port refuses; a reused one lacks the nonce),
    else read again. Every rank then uses ``PrefixStore("tsm_apps/attempt/NONCE", agent)``:
    keys no earlier attempt wrote, in a store that outlives rank 0 (the agent's, as torch
    intends). This needs no restart count, which differs between nodes (only the failed node's
    agent counts a restart). Returns ``(store, beacon)``; rank 0 keeps the beacon referenced
    while the group lives (``None`` on the other ranks).
    """
    agent = dist.TCPStore(env.master_addr, env.master_port, is_master=False, timeout=timeout)
    beacon = None
    if env.rank == 0:
        nonce = secrets.token_hex(8)
        beacon = dist.TCPStore(
            env.master_addr, 0, is_master=True, timeout=timeout, wait_for_workers=False
        )
        beacon.set("nonce", nonce)
        agent.set(ATTEMPT_KEY, f"{beacon.port} {nonce}")
    else:
        deadline = time.monotonic() + timeout.total_seconds()
        while True:
            port, nonce = agent.get(ATTEMPT_KEY).decode().split()
            try:  # a plain connect first: a dead port refuses at once, without TCPStore's retries
                socket.create_connection((env.master_addr, int(port)), timeout=probe_s).close()
                probe = dist.TCPStore(
                    env.master_addr, int(port), is_master=False, timeout=timedelta(seconds=probe_s)
                )
                if probe.get("nonce").decode() == nonce:
                    break
            except (OSError, RuntimeError):  # refused, or DistNetworkError / DistStoreError
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"rank {env.rank}: no live attempt published under "
                    f"{ATTEMPT_KEY!r} at {env.master_addr}:{env.master_port}"
                )
            time.sleep(0.1)
    return dist.PrefixStore(f"{ATTEMPT_KEY}/{nonce}", agent), beacon


@contextmanager
def process_group(env: DistEnv, device: torch.device) -> Iterator[DistEnv]:
    """Initialise the default process group for ``env`` (no-op for one process); always torn down.

    Under torchrun's agent store the group's keys go to :func:`attempt_store` (safe across
    ``--max-restarts``); otherwise (SLURM, ``TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1``) ``env://``,
    where rank 0 hosts a store that dies with its attempt."""
    if not env.distributed or dist.is_initialized():
        yield env
        return
    if device.type == "cuda":
        torch.cuda.set_device(device)
    if env.launcher == "slurm":  # env:// rendezvous reads these
        os.environ.setdefault("MASTER_ADDR", env.master_addr)
        os.environ.setdefault("MASTER_PORT", str(env.master_port))
    store, beacon = attempt_store(env) if env.agent_store else (None, None)
    dist.init_process_group(
        pick_backend(device), store=store, rank=env.rank, world_size=env.world_size
    )
    try:  # rank 0 keeps its beacon as long as the group (NCCL connects lazily, at first use)
        yield env
    finally:
        dist.destroy_process_group()
        del beacon


class CommCounter:
    """Counts all-reduce calls, bytes and synchronisations; wraps the trainer's collectives and
    DDP's gradient hook.

    A *synchronisation* is one exchange of model state between the processes: the all-reduces
    made inside one :meth:`round` (DDP's step, which makes one call per gradient bucket) count
    once; a call outside any round counts as a synchronisation of its own.
    """

    def __init__(self) -> None:
        self.calls = 0
        self.bytes = 0
        self.syncs = 0
        self._depth, self._round_start = 0, 0

    def _count(self, t: Tensor) -> None:
        self.calls += 1
        self.bytes += t.numel() * t.element_size()
        if self._depth == 0:
            self.syncs += 1

    @contextmanager
    def round(self) -> Iterator[None]:
        """The all-reduces made inside count as one synchronisation (none if there are none)."""
        if self._depth == 0:
            self._round_start = self.calls
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1
            if self._depth == 0 and self.calls > self._round_start:
                self.syncs += 1

    def all_reduce_(self, t: Tensor, op: str = "sum") -> Tensor:
        """In-place all-reduce (``op``: ``"sum"`` or ``"mean"``); identity for one process."""
        if op not in ("sum", "mean"):
            raise ValueError(f"op must be 'sum' or 'mean', got {op!r}")
        if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() == 1:
            return t
        self._count(t)
        dist.all_reduce(t, op=dist.ReduceOp.SUM)
        if op == "mean":
            t.div_(dist.get_world_size())
        return t

    def ddp_hook(self, state, bucket):  # no annotations: DDP checks them against real types
        """DDP comm hook ``(state, dist.GradBucket) -> Future[Tensor]``: the default averaging
        all-reduce, counted."""
        from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook

        self._count(bucket.buffer())
        return allreduce_hook(state, bucket)

    def state_dict(self) -> dict:
        return {"calls": self.calls, "bytes": self.bytes, "syncs": self.syncs}

    def load_state_dict(self, d: dict) -> None:
        """Counts of a checkpoint (``syncs`` 0 for checkpoints that predate it)."""
        self.calls, self.bytes = int(d["calls"]), int(d["bytes"])
        self.syncs = int(d.get("syncs", 0))


def world_size() -> int:
    return dist.get_world_size() if dist.is_available() and dist.is_initialized() else 1
