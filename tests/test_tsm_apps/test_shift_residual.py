"""The residual epilogue fused with the next block's shift, off CUDA: the op computes
``torch.relu(a + b)`` and the official shift (written in the test), refuses bad shapes in one
line, and a model whose stages fuse keeps its names, parameters and CPU outputs. The Triton
kernel itself and the fused stages on it are tested interpreted (``test_shift_kernel.py``)."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from tests.test_tsm_apps.official_shift import official_shift
from tsm_apps.models.recognizer import build_recognizer
from tsm_apps.models.shift import (
    ResidualShiftStage,
    cuda_shift_path,
    fuse_residual_shifts,
    residual_relu_shift,
)
from tsm_apps.models.shift import kernel as shift_kernel


@pytest.mark.parametrize("fmt", [torch.contiguous_format, torch.channels_last])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
@pytest.mark.parametrize("online", [False, True])
def test_cpu_op_is_relu_add_then_official_shift(fmt, dtype, online):
    g = torch.Generator().manual_seed(3)
    a, b, gy, gz = (
        torch.randn(6, 16, 3, 4, generator=g).to(dtype).contiguous(memory_format=fmt)
        for _ in range(4)
    )
    ag, bg = a.clone().requires_grad_(), b.clone().requires_grad_()
    y, z = residual_relu_shift(ag, bg, 3, 8, online)
    torch.autograd.backward([y, z], [gy, gz])
    ar, br = a.clone().requires_grad_(), b.clone().requires_grad_()
    yr = torch.relu(ar + br)
    zr = official_shift(yr, 3, 8, online)
    torch.autograd.backward([yr, zr], [gy, gz])
    assert torch.equal(y, yr) and torch.equal(z, zr)
    assert torch.equal(ag.grad, ar.grad) and torch.equal(bg.grad, br.grad)
    assert y.dtype == z.dtype == dtype and z.is_contiguous(memory_format=fmt)


def test_op_refuses_bad_shapes_naming_them():
    a = torch.zeros(5, 16, 2, 2)
    with pytest.raises(ValueError, match=r"batch dim 5 of shape \(5, 16, 2, 2\).*num_segments=2"):
        residual_relu_shift(a, a, 2)
    with pytest.raises(ValueError, match=r"fold_div=32 leaves no channel.*\(5, 16, 2, 2\)"):
        residual_relu_shift(a, a, 5, 32)
    with pytest.raises(ValueError, match=r"identity of shape \(5, 8, 2, 2\).*\(5, 16, 2, 2\)"):
        residual_relu_shift(a, torch.zeros(5, 8, 2, 2), 5)
    with pytest.raises(ValueError, match=r"\(N\*T, C, H, W\).*\(5, 16, 4\)"):
        residual_relu_shift(torch.zeros(5, 16, 4), torch.zeros(5, 16, 4), 5)


def test_kernel_refuses_a_pair_of_two_dtypes_before_launching():
    a = torch.zeros(4, 16, 2, 2)
    with pytest.raises(ValueError, match=r"\(4, 16, 2, 2\) torch.float32.*torch.bfloat16"):
        shift_kernel.residual_shift(a, a.bfloat16(), 2, 2, (1, -1))


def _stages(m: nn.Module) -> list:
    return [m.backbone.layer1, m.backbone.layer2, m.backbone.layer3, m.backbone.layer4]


@pytest.mark.parametrize("shift", ["offline", "online"])
def test_fusing_stages_keeps_names_and_cpu_outputs(shift):
    """On the CPU the fused path never runs (also under ``cuda_shift_path("fused")``): the
    same logits and gradients as the model before, under the same names."""
    torch.manual_seed(0)
    m = build_recognizer("resnet18", 5, 4, shift, width=0.125).eval()
    x = torch.randn(2, 4, 3, 32, 32, generator=torch.Generator().manual_seed(1))
    keys = list(m.state_dict())
    with torch.no_grad():
        want = m(x)
    fuse_residual_shifts(m)
    assert all(type(s) is ResidualShiftStage for s in _stages(m))
    assert list(m.state_dict()) == keys and not m.training
    with torch.no_grad(), cuda_shift_path("fused"):
        assert torch.equal(m(x), want)


def test_only_stages_with_a_block_feeding_a_shifted_one_fuse():
    """TSN and ``place="block"`` have no shifted first convolution to feed: unchanged; from
    ResNet-101 on (every other block shifted) the stages fuse."""
    for m in (
        build_recognizer("resnet18", 5, 4, None, width=0.125),
        build_recognizer("resnet18", 5, 4, "offline", place="block", width=0.125),
    ):
        assert all(type(s) is nn.Sequential for s in _stages(fuse_residual_shifts(m)))
    deep = fuse_residual_shifts(build_recognizer("resnet101", 5, 4, "offline", width=0.125))
    assert all(type(s) is ResidualShiftStage for s in _stages(deep))


def test_cuda_shift_path_accepts_fused_only_among_its_paths():
    with cuda_shift_path("fused"):
        pass
    with pytest.raises(ValueError, match="'fuse'"):
        with cuda_shift_path("fuse"):
            pass


def test_fused_kernels_compile_for_a_gpu_without_one():
    """The interpreter runs the kernels as Python; this compiles them the way a GPU run does
    (Triton to PTX to an sm_90 cubin with Triton's own ptxas, no device needed), forward and
    backward, for bf16 channels-last (the benchmarked setting) and fp32 NCHW."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    ints = ("frame_numel", "hw", "channels", "fold", "num_segments", "d0", "d1")
    for dt, cl in (("bf16", True), ("fp32", False)):
        flags = {"BF16": dt == "bf16", "CHANNELS_LAST": cl, "BLOCK": shift_kernel.BLOCK}
        for fn, ptrs, more in (
            (shift_kernel._residual_shift_kernel, ("a", "b", "y", "z"), {}),
            (
                shift_kernel._residual_shift_backward_kernel,
                ("gy", "gz", "y", "g"),
                {"HAS_GY": True, "HAS_GZ": True},
            ),
        ):
            consts = {**more, **flags}
            sig = {p: f"*{dt}" for p in ptrs} | {k: "i32" for k in ints}
            sig |= {k: "constexpr" for k in consts}
            src = ASTSource(fn=fn, signature=sig, constexprs=consts)
            compiled = triton.compile(src, target=GPUTarget("cuda", 90, 32))
            assert len(compiled.asm["cubin"]) > 1000 and ".target sm_90" in compiled.asm["ptx"]
