"""``TSMResNet``: the ``tsm_apps`` multi-level backbone (TSM online/offline or TSN) as an
mmdet backbone.

Clip mode and streaming are :class:`tsm_apps.models.backbone.Backbone`'s: clips ``(N*T, 3, H,
W)`` with the ``T = num_segments`` frames of each clip contiguous give a tuple of stage maps
``(N*T, C_i, h_i, w_i)`` for ``out_indices``; a streaming step (online TSM at test time,
:meth:`~tsm_apps.models.backbone.Backbone.step`) takes one frame per stream ``(S, 3, H, W)`` and
the streams' :class:`~tsm_apps.models.ShiftState`, so frame-by-frame outputs equal the
whole-clip outputs of the causal (online) shift. This module adds what mmdet's ResNet has:
stage freezing, BN in eval mode, frozen BN affine, and pretrained weights of any layout the
suite reads.
"""

from __future__ import annotations

from typing import Optional, Sequence

import torch
from mmdet.registry import MODELS
from mmengine.logging import print_log
from torch import nn

from tsm_apps.checkpoint.reading import backbone_weights, state_dict_mismatch
from tsm_apps.models.backbone import Backbone, BackboneConfig
from tsm_apps.models.shift import DEFAULT_FOLD_DIV
from tsm_apps.models.trunk import DEFAULT_NORM_GROUPS


@MODELS.register_module()
class TSMResNet(Backbone):
    """The ``tsm_apps`` multi-level backbone (:class:`~tsm_apps.models.backbone.Backbone`: clip
    mode and streaming) as an mmdet backbone: ResNets only, with mmdet's stage freezing, BN
    modes and checkpoint loading.

    Args:
        arch: ``'resnet18' | 'resnet34' | 'resnet50' | 'resnet101' | 'resnet152'``.
        width: channel multiplier of every stage (``0.125`` turns resnet18 into an 8-16-32-64
            net for tests/CPU configs; never fewer than 8 channels).
        num_segments: ``T``, frames per training clip (the batch must be ``N*T`` frames).
        shift: ``'online'`` (causal, streamable), ``'offline'`` (bi-directional) or ``None``
            (TSN: the same 2D network, no shift).
        fold_div: ``1/fold_div`` of a block's input channels is shifted per direction.
        place: ``'blockres'`` (shift inside the residual branch) or ``'block'``.
        strides / dilations: per stage (res2..res5). The VID R-FCN recipe is
            ``strides=(1, 2, 2, 1)``, ``dilations=(1, 1, 1, 2)`` (res5 at stride 16, dilated).
        norm: ``'batch'`` (BatchNorm) or ``'group'`` (GroupNorm of ``norm_groups`` groups, at
            most one per channel: statistics of each frame alone, whatever the batch).
        out_indices: stages returned (0..3 = res2..res5).
        frozen_stages: mmdet semantics: ``-1`` nothing frozen, ``0`` the stem (conv1/bn1),
            ``i >= 1`` the stem and res2..res(i+1); frozen parts have no grad and stay in eval.
        norm_eval: keep every BatchNorm in eval mode (frozen statistics) while training.
        frozen_bn_affine: BatchNorm ``weight``/``bias`` get no gradient (MSRA R-FCN: BN
            ``use_global_stats`` with fixed gamma/beta).
        checkpoint: optional path of the weights :meth:`init_weights` loads: a torchvision
            ImageNet ResNet state dict (plain or under ``state_dict``/``model``), an
            mmpretrain/mmcls ResNet, a ``tsm_apps`` recognizer, an official TSM or an mmaction2
            TSM checkpoint; classifier keys are dropped; the layout and the loaded/missing
            counts are logged. Nothing is ever downloaded.
        allow_random_frozen: without a ``checkpoint``, frozen stages (``frozen_stages > -1``)
            or frozen BN statistics (``norm_eval``) would keep random weights and 0/1 statistics
            for the whole run, so :meth:`init_weights` (start of training) refuses them unless
            this is ``True``.
        init_cfg: only ``None`` (mmdet's signature): the trunk keeps its own Kaiming init and
            ``checkpoint`` gives pretrained weights.
    """

    def __init__(
        self,
        arch: str = "resnet50",
        width: float = 1.0,
        num_segments: int = 8,
        shift: Optional[str] = "online",
        fold_div: int = DEFAULT_FOLD_DIV,
        place: str = "blockres",
        strides: Sequence[int] = (1, 2, 2, 1),
        dilations: Sequence[int] = (1, 1, 1, 2),
        norm: str = "batch",
        norm_groups: int = DEFAULT_NORM_GROUPS,
        out_indices: Sequence[int] = (3,),
        frozen_stages: int = -1,
        norm_eval: bool = True,
        frozen_bn_affine: bool = False,
        checkpoint: Optional[str] = None,
        allow_random_frozen: bool = False,
        init_cfg: Optional[dict] = None,
    ) -> None:
        if init_cfg is not None:
            raise ValueError(
                f"TSMResNet takes no init_cfg (got {init_cfg}); give pretrained weights as "
                "model.backbone.checkpoint=<.pth>"
            )
        if arch == "mobilenetv2":
            raise ValueError("TSMResNet wraps ResNets only; got arch='mobilenetv2'")
        if not all(0 <= i <= 3 for i in out_indices) or not out_indices:
            raise ValueError(f"out_indices must be stage numbers in 0..3, got {out_indices}")
        if not -1 <= frozen_stages <= 4:
            raise ValueError(f"frozen_stages must be in -1..4, got {frozen_stages}")
        cfg = BackboneConfig(
            arch=arch,
            num_segments=num_segments,
            shift=shift,
            fold_div=fold_div,
            place=place,
            width=width,
            strides=tuple(strides),
            dilations=tuple(dilations),
            norm=norm,
            norm_groups=norm_groups,
        )
        super().__init__(cfg, out_indices)
        self.frozen_stages, self.norm_eval = frozen_stages, norm_eval
        self.frozen_bn_affine = frozen_bn_affine
        self.checkpoint, self.allow_random_frozen = checkpoint, allow_random_frozen
        self._freeze()

    # -- training behaviour ----------------------------------------------------------------
    def _frozen_modules(self) -> list:
        if self.frozen_stages < 0:
            return []
        t = self.trunk
        return [t.conv1, t.bn1] + t.stages[: self.frozen_stages]

    def _freeze(self) -> None:
        for m in self._frozen_modules():
            m.eval()
            for p in m.parameters():
                p.requires_grad = False
        if self.frozen_bn_affine:
            for m in self.modules():
                if isinstance(m, nn.modules.batchnorm._BatchNorm):
                    for p in m.parameters():
                        p.requires_grad = False

    def train(self, mode: bool = True) -> "TSMResNet":
        super().train(mode)
        self._freeze()
        if mode and self.norm_eval:
            for m in self.modules():
                if isinstance(m, nn.modules.batchnorm._BatchNorm):
                    m.eval()
        return self

    def init_weights(self) -> None:
        """Load the ``checkpoint`` weights over the trunk's Kaiming init (mmengine calls this at
        the start of training); refuses frozen random weights."""
        check_random_frozen(
            self.checkpoint, self.frozen_stages, self.norm_eval, self.allow_random_frozen
        )
        if self.checkpoint:
            self.load_tsm_checkpoint(self.checkpoint)

    def load_tsm_checkpoint(self, path: str) -> dict:
        """Load the backbone weights of a checkpoint of any layout ``tsm_apps`` reads (see
        ``checkpoint``) into the trunk; classifier keys dropped. Returns and logs ``{"layout",
        "loaded", "missing", "dropped"}``; one-line ValueError on missing keys / shape conflicts."""
        own = list(self.trunk.state_dict())
        layout, trunk_sd, dropped = backbone_weights(path, own)
        missing, unexpected, conflicts = state_dict_mismatch(self.trunk, trunk_sd)
        if missing or conflicts or not trunk_sd:
            raise ValueError(
                f"checkpoint {path} ({layout} layout) does not fit "
                f"TSMResNet(arch={self.cfg.arch}, width={self.cfg.width}): "
                f"{len(missing)} missing keys {missing[:4]}, {len(conflicts)} shape "
                f"conflicts {conflicts[:3]}"
            )
        with torch.no_grad():
            self.trunk.load_state_dict(trunk_sd, strict=False)
        report = {
            "layout": layout,
            "loaded": len(trunk_sd) - len(unexpected),
            "missing": 0,
            "dropped": dropped + len(unexpected),
        }
        print_log(
            f"TSMResNet: {path}: {layout} layout, {report['loaded']} tensors loaded, "
            f"0 missing, {report['dropped']} dropped (classifier and non-backbone keys)",
            logger="current",
        )
        return report


def check_random_frozen(
    checkpoint: Optional[str],
    frozen_stages: int,
    norm_eval: bool,
    allow_random_frozen: bool = False,
) -> None:
    """ValueError when training would freeze random weights (``frozen_stages > -1``) or keep
    BN statistics at 0/1 (``norm_eval``) because no ``checkpoint`` is given."""
    if checkpoint or allow_random_frozen or (frozen_stages < 0 and not norm_eval):
        return
    raise ValueError(
        f"TSMResNet: no backbone checkpoint but frozen_stages={frozen_stages}, "
        f"norm_eval={norm_eval}: random weights/BN statistics would stay frozen; "
        "give model.backbone.checkpoint=<ImageNet ResNet .pth>, or train from "
        "scratch with frozen_stages=-1 norm_eval=False, or set "
        "allow_random_frozen=True"
    )
