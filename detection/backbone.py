"""``TSMResNet``: the ``tsm_apps`` ResNet (TSM online/offline or TSN) as an mmdet backbone.

Clip mode (training, offline TSM): input ``(N*T, 3, H, W)`` with the ``T = num_segments`` frames
of each clip contiguous; output a tuple of stage maps ``(N*T, C_i, h_i, w_i)`` for
``out_indices``. A streaming step (online TSM at test time, :meth:`TSMResNet.step`) takes one
frame per stream ``(S, 3, H, W)`` and the streams' :class:`~tsm_apps.models.ShiftState` (the
previous frame's shifted channels, one buffer per shifted block, owned by the caller), so
frame-by-frame outputs equal the whole-clip outputs of the causal (online) shift.
"""

from __future__ import annotations

from typing import Optional, Sequence

import torch
from mmdet.registry import MODELS
from mmengine.logging import print_log
from mmengine.model import BaseModule
from torch import Tensor, nn

from tsm_apps.checkpoint.reading import backbone_weights, state_dict_mismatch
from tsm_apps.models.backbone import BackboneConfig, build_trunk, set_num_segments
from tsm_apps.models.online import online_modules
from tsm_apps.models.shift import DEFAULT_FOLD_DIV
from tsm_apps.models.shift.state import ShiftState, stepping
from tsm_apps.models.trunk import DEFAULT_NORM_GROUPS


@MODELS.register_module()
class TSMResNet(BaseModule):
    """ResNet trunk of ``tsm_apps`` with temporal shift, for mmdet detectors.

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
        init_cfg: mmengine init config (default ``None``: the trunk's own Kaiming init).
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
        super().__init__(init_cfg)
        if arch == "mobilenetv2":
            raise ValueError("TSMResNet wraps ResNets only; got arch='mobilenetv2'")
        if not all(0 <= i <= 3 for i in out_indices) or not out_indices:
            raise ValueError(f"out_indices must be stage numbers in 0..3, got {out_indices}")
        if not -1 <= frozen_stages <= 4:
            raise ValueError(f"frozen_stages must be in -1..4, got {frozen_stages}")
        self.cfg = BackboneConfig(
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
        self.trunk = build_trunk(self.cfg)
        self.out_indices = tuple(out_indices)
        self.out_channels = tuple(self.trunk.stage_channels[i] for i in self.out_indices)
        self.frozen_stages, self.norm_eval = frozen_stages, norm_eval
        self.frozen_bn_affine = frozen_bn_affine
        self.checkpoint, self.allow_random_frozen = checkpoint, allow_random_frozen
        self._freeze()

    # -- clip mode -------------------------------------------------------------------------
    @property
    def num_segments(self) -> int:
        return self.cfg.num_segments

    def set_num_segments(self, num_segments: int) -> None:
        """Change ``T`` of every shift module (e.g. a different clip length at test time)."""
        if num_segments < 1:
            raise ValueError(f"num_segments must be >= 1, got {num_segments}")
        set_num_segments(self.trunk, num_segments)
        self.cfg.num_segments = num_segments

    def forward(self, x: Tensor) -> tuple:
        """``(N*T, 3, H, W)`` clips -> tuple of maps (one frame per stream: :meth:`step`)."""
        if not isinstance(x, Tensor):
            raise TypeError(f"TSMResNet expects a Tensor, got {type(x).__name__}")
        if x.dim() != 4 or x.shape[1] != 3:
            raise ValueError(f"TSMResNet expects (N*T, 3, H, W), got {tuple(x.shape)}")
        if x.shape[0] % self.num_segments:
            raise ValueError(
                f"TSMResNet: batch of {x.shape[0]} frames (shape {tuple(x.shape)}) "
                f"is not a whole number of clips of num_segments={self.num_segments}"
            )
        return self.stages(x)

    def stages(self, x: Tensor) -> tuple:
        """The maps of ``out_indices`` for ``x`` (no shape check: clips, or one frame per stream
        inside a :func:`~tsm_apps.models.shift.state.stepping` block)."""
        outs = self.trunk.forward_stages(x)
        return tuple(outs[i] for i in self.out_indices)

    # -- streaming (online shift) -----------------------------------------------------------
    @property
    def shift_modules(self) -> list:
        """The shift modules a stream's state belongs to (``[]`` for TSN: nothing carried);
        ValueError for ``shift='offline'``, which cannot stream."""
        if self.cfg.shift == "offline":
            raise ValueError(
                "streaming needs shift='online' (causal) or None; this backbone "
                "was built with shift='offline'"
            )
        return online_modules(self.trunk)

    def new_state(self) -> ShiftState:
        """A stream's state before its first frame (zeros)."""
        return ShiftState(len(self.shift_modules))

    def step(self, x: Tensor, state: ShiftState) -> tuple:
        """One frame per stream ``(S, 3, H, W)`` -> the stage maps; ``state`` (``S`` rows, or
        empty before the first frame) is advanced in place."""
        if not isinstance(x, Tensor) or x.dim() != 4 or x.shape[1] != 3:
            raise ValueError(f"TSMResNet.step expects (S, 3, H, W), got {getattr(x, 'shape', x)}")
        with stepping(self.shift_modules, state):
            return self.stages(x)

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
        """Kaiming init, then the ``checkpoint`` weights; refuses frozen random weights."""
        check_random_frozen(
            self.checkpoint, self.frozen_stages, self.norm_eval, self.allow_random_frozen
        )
        super().init_weights()
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
