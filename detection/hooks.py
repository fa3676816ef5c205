"""mmengine hooks of the detector (registered in mmdet's ``HOOKS``).

:class:`PlainCheckpointHook` keeps every checkpoint that training saves loadable with
``weights_only=True`` (see :mod:`detection.checkpoint` for why and how).
"""

from __future__ import annotations

from mmdet.registry import HOOKS
from mmengine.hooks import Hook

from .checkpoint import buffers_from_plain, buffers_to_plain, plain


@HOOKS.register_module()
class PlainCheckpointHook(Hook):
    """Save mmengine checkpoints as plain data (loadable with ``weights_only=True``) and
    restore their message-hub history buffers on resume."""

    priority = "VERY_LOW"

    def before_save_checkpoint(self, runner, checkpoint: dict) -> None:
        hub = checkpoint.get("message_hub")
        if isinstance(hub, dict):
            hub["log_scalars"] = buffers_to_plain(hub.get("log_scalars", {}))
            hub["runtime_info"] = plain(hub.get("runtime_info", {}))
        if isinstance(checkpoint.get("meta"), dict):
            checkpoint["meta"] = plain(checkpoint["meta"])

    def after_load_checkpoint(self, runner, checkpoint: dict) -> None:
        hub = checkpoint.get("message_hub")
        if isinstance(hub, dict) and isinstance(hub.get("log_scalars"), dict):
            hub["log_scalars"] = buffers_from_plain(hub["log_scalars"])
