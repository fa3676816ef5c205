"""The mmengine config a ``tsm detect train|test`` run uses: the config file with
``--cfg-options`` merged, the ``data_root`` and ``img_scale`` shorthands applied to every dataset
of the dataloaders (wrapped ones too), and the launcher set from torchrun's (or SLURM's)
environment."""

from __future__ import annotations

from tsm_apps.distributed import env_from, pick_backend, pick_device
from tsm_apps.errors import UserError

DATASET_LOADERS = ("train_dataloader", "val_dataloader", "test_dataloader")


def apply_data_root(cfg, options: dict) -> None:
    """Propagate ``data_root`` given in ``--cfg-options`` to every dataset of ``cfg`` (also
    wrapped ones: ``dataset.dataset``, ``datasets[i]``) unless the option set theirs too."""
    if "data_root" not in options:
        return
    root = options["data_root"]

    def visit(ds, key):
        if not isinstance(ds, dict):
            return
        if (
            f"{key}.data_root" not in options
            and "type" in ds
            and "dataset" not in ds
            and "datasets" not in ds
        ):
            ds["data_root"] = root
        if "dataset" in ds:
            visit(ds["dataset"], f"{key}.dataset")
        for i, d in enumerate(ds.get("datasets") or []):
            visit(d, f"{key}.datasets.{i}")

    for loader in DATASET_LOADERS:
        if cfg.get(loader):
            visit(cfg[loader].get("dataset"), f"{loader}.dataset")


def apply_img_scale(cfg, options: dict) -> None:
    """Set ``scale`` of every ``Resize`` in the dataloaders' pipelines to ``img_scale`` given in
    ``--cfg-options`` (``(long side, short side)`` bounds, as mmdet's ``keep_ratio`` Resize)."""
    if "img_scale" not in options:
        return
    scale = options["img_scale"]
    if not (isinstance(scale, (list, tuple)) and len(scale) == 2):
        raise UserError(f"--cfg-options img_scale must be two numbers W,H, got {scale!r}")

    def visit(ds):
        if not isinstance(ds, dict):
            return
        for t in ds.get("pipeline") or []:
            if isinstance(t, dict) and t.get("type") == "Resize":
                t["scale"] = tuple(int(v) for v in scale)
        visit(ds.get("dataset"))
        for d in ds.get("datasets") or []:
            visit(d)

    for loader in DATASET_LOADERS:
        if cfg.get(loader):
            visit(cfg[loader].get("dataset"))


def runner_config(path: str, options: dict):
    """The config of ``path`` with ``options`` merged, ``data_root`` and ``img_scale`` applied
    and the launcher set (``pytorch`` under torchrun, else ``none``)."""
    from .inference import load_config

    cfg = load_config(path, options)
    apply_data_root(cfg, options)
    apply_img_scale(cfg, options)
    env = env_from()  # torchrun's (or SLURM's) variables, read as every batch job reads them
    cfg.launcher = "pytorch" if env.distributed else "none"
    if env.distributed:
        _setup_distributed(cfg)
    return cfg


def _setup_distributed(cfg) -> None:
    """torchrun: NCCL on CUDA. Without CUDA, mmengine's ``pytorch`` launcher would call
    ``torch.cuda.set_device``, so join the gloo process group here (the Runner then skips its own
    init) and wrap the model in a device-less DDP."""
    import torch.distributed as dist

    backend = pick_backend(pick_device("auto", env_from()))
    cfg.setdefault("env_cfg", {}).setdefault("dist_cfg", {})["backend"] = backend
    if backend == "nccl":
        return
    if not dist.is_initialized():
        dist.init_process_group(backend="gloo")
    cfg.model_wrapper_cfg = dict(
        type="MMDistributedDataParallel",
        device_ids=None,
        broadcast_buffers=False,
        find_unused_parameters=cfg.get("find_unused_parameters", False),
    )
