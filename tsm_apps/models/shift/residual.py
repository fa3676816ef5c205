"""A ResNet stage whose residual epilogues also write the next block's shifted input.

With ``place="blockres"`` block ``k``'s first convolution reads ``shift(y)``, ``y`` being block
``k-1``'s output ``relu(branch + identity)`` (which also feeds block ``k``'s identity path).
:class:`ResidualShiftStage` runs the blocks of a stage ``(N*T, C, H, W) -> (N*T, C', H', W')``
(frames of one clip contiguous; NCHW or channels-last) and, under
``cuda_shift_path("fused")`` on CUDA, ends block ``k-1`` with
:func:`.op.residual_relu_shift`: one launch writes ``y`` and ``shift(y)``, and block ``k``'s
convolution reads the latter directly, so the shift costs no pass of its own over ``y``.
Everywhere else (the CPU, tracing, any other path, a stream stepping online) the stage is the
plain ``nn.Sequential`` of its blocks; a block (or shift) with hooks of its own runs its own
``forward`` so that its hooks see it. Values and gradients are the same bit for bit (the fused
op equals ``torch.relu(a + b)`` and the official shift; the blocks' layers are called as their
own ``forward`` calls them). Only pairs inside a stage fuse: a stage's last output also leaves
the stage (a detector reads it), and the next stage's first block takes it through its
downsampling shortcut.

Module names are unchanged (the stage holds the same blocks under the same indices), so
checkpoints and official keys (``layer1.0.conv1.net.weight``) are unaffected.
:func:`fuse_residual_shifts` makes the stages of a model fusing ones.
"""

from __future__ import annotations

from collections import OrderedDict

from torch import Tensor, nn

from .layer import TemporalShift
from .op import fuses_epilogues, residual_relu_shift
from .state import bound_slot


def _hooked(m: nn.Module) -> bool:
    """A module with hooks of its own runs its own ``forward`` (so its hooks see its call)."""
    return bool(
        m._forward_hooks or m._forward_pre_hooks or m._backward_hooks or m._backward_pre_hooks
    )


def _resnet_blocks() -> tuple:
    """torchvision's residual blocks, the ones whose ``forward`` :func:`_branch` follows
    (imported on first use: the shift package does not import torchvision)."""
    from torchvision.models.resnet import BasicBlock, Bottleneck

    return BasicBlock, Bottleneck


def _plain_block(m: nn.Module) -> bool:
    return isinstance(m, _resnet_blocks()) and not _hooked(m)


def _shift_of(block: nn.Module | None) -> TemporalShift | None:
    """The shift wrapping ``block``'s first convolution, when it may be fed a shifted input
    (offline clips: not bound to a stream's state, no hooks of its own)."""
    if block is None or not _plain_block(block):
        return None
    s = block.conv1
    if not isinstance(s, TemporalShift) or _hooked(s) or bound_slot(s) is not None:
        return None
    return s


def _branch(block: nn.Module, x: Tensor, shifted: Tensor | None) -> tuple[Tensor, Tensor]:
    """``(branch, identity)`` of a torchvision block for input ``x``, the layers called as its
    ``forward`` calls them; ``shifted``: the first convolution's shifted input, given."""
    conv1 = block.conv1 if shifted is None else block.conv1.net
    out = block.relu(block.bn1(conv1(x if shifted is None else shifted)))
    out = block.bn2(block.conv2(out))
    if isinstance(block, _resnet_blocks()[1]):
        out = block.bn3(block.conv3(block.relu(out)))
    identity = x if block.downsample is None else block.downsample(x)
    return out, identity


class ResidualShiftStage(nn.Sequential):
    """The blocks of one ResNet stage; see the module docstring for the fused path."""

    def forward(self, x: Tensor) -> Tensor:
        if not fuses_epilogues(x):
            return super().forward(x)
        blocks = list(self)
        shifted = None
        for i, block in enumerate(blocks):
            nxt = _shift_of(blocks[i + 1] if i + 1 < len(blocks) else None)
            if shifted is None and (nxt is None or not _plain_block(block)):
                x = block(x)
                continue
            a, b = _branch(block, x, shifted)
            if nxt is None:
                x, shifted = (a + b).relu_(), None
            else:
                x, shifted = residual_relu_shift(a, b, nxt.num_segments, nxt.fold_div, nxt.online)
        return x


def fuse_residual_shifts(model: nn.Module) -> nn.Module:
    """Make every ``nn.Sequential`` of ``model`` in which a plain block feeds a shifted one
    (``place="blockres"``) a :class:`ResidualShiftStage` holding the same blocks (in place;
    names, parameters and outputs unchanged). Returns ``model``."""
    for name, child in list(model.named_children()):
        if type(child) is nn.Sequential and any(
            _plain_block(a) and _shift_of(b) is not None for a, b in zip(child, child[1:])
        ):
            stage = ResidualShiftStage(OrderedDict(child.named_children()))
            stage.train(child.training)
            setattr(model, name, stage)
        else:
            fuse_residual_shifts(child)
    return model
