"""``tsm_apps.distributed`` in one process: the launchers' variables (SLURM, torchrun) read into
rank, world size, local rank and master address, and the attempt store that gives each torchrun
attempt its own namespace in the agent's store."""

import socket
import time

import pytest

from tsm_apps.distributed import env_from


def test_slurm_variables_map_to_ranks_and_master_address():
    env = env_from(
        {
            "SLURM_PROCID": "5",
            "SLURM_NTASKS": "8",
            "SLURM_LOCALID": "1",
            "SLURM_JOB_NODELIST": "gpu[03-05,9],cpu1",
        }
    )
    assert (env.rank, env.world_size, env.local_rank) == (5, 8, 1)
    assert (env.master_addr, env.launcher) == ("gpu03", "slurm") and env.master_port > 0
    env = env_from(
        {
            "SLURM_PROCID": "0",
            "SLURM_NTASKS": "2",
            "SLURM_NODELIST": "node7",
            "MASTER_PORT": "29511",
        }
    )
    assert (env.rank, env.world_size, env.local_rank, env.master_addr, env.master_port) == (
        0,
        2,
        0,
        "node7",
        29511,
    )
    # torchrun's variables win under `srun torchrun`
    env = env_from({"SLURM_PROCID": "3", "SLURM_NTASKS": "4", "RANK": "1", "WORLD_SIZE": "2"})
    assert (env.rank, env.world_size, env.launcher) == (1, 2, "torchrun")
    with pytest.raises(ValueError, match="SLURM_PROCID='x'"):
        env_from({"SLURM_PROCID": "x", "SLURM_NTASKS": "2"})


def test_attempt_store_skips_a_killed_attempts_published_beacon():
    # the agent's store still names the previous attempt's beacon: first a dead port, then a
    # live store without this attempt's nonce; rank 1 takes only what rank 0 publishes
    import threading
    from datetime import timedelta

    import torch.distributed as dist

    from tsm_apps.distributed import ATTEMPT_KEY, DistEnv, attempt_store

    agent = dist.TCPStore("127.0.0.1", 0, is_master=True, wait_for_workers=False)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]
    agent.set(ATTEMPT_KEY, f"{dead} 00")
    env = dict(
        world_size=2,
        master_addr="127.0.0.1",
        master_port=agent.port,
        launcher="torchrun",
        agent_store=True,
    )
    got = {}
    t = threading.Thread(
        target=lambda: got.setdefault(
            1, attempt_store(DistEnv(rank=1, **env), timedelta(seconds=10), probe_s=1.0)
        )
    )
    t.start()
    time.sleep(0.5)
    foreign = dist.TCPStore("127.0.0.1", 0, is_master=True, wait_for_workers=False)
    foreign.set("nonce", "11")
    agent.set(ATTEMPT_KEY, f"{foreign.port} 22")
    time.sleep(0.5)
    assert t.is_alive()  # still looking: neither the dead port nor the foreign store will do
    s0, beacon = attempt_store(DistEnv(rank=0, **env), timedelta(seconds=10))
    t.join(10)
    assert not t.is_alive() and got[1][1] is None and beacon is not None
    s0.set("k", "v")  # one namespace, in the agent's store
    assert got[1][0].get("k") == b"v"
    nonce = agent.get(ATTEMPT_KEY).decode().split()[1]
    assert agent.check([f"{ATTEMPT_KEY}/{nonce}/k"])
