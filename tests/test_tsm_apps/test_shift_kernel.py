"""The Triton shift kernels (the CUDA path), run on the CPU under Triton's interpreter in a
separate process (``interpreted_kernels.py``), against the official shift written here from
its formula (mit-han-lab ``TemporalShift.shift``: ``zeros_like`` + slice copies), forward and
backward (autograd through the official formula), bit for bit."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from tests.test_tsm_apps.interpreted_kernels import DTYPES, FORMATS, FUSED_MODELS, SHAPES
from tests.test_tsm_apps.official_shift import official_shift
from tsm_apps.models.online import OnlineRecognizer
from tsm_apps.models.recognizer import build_recognizer
from tsm_apps.models.shift.residual import ResidualShiftStage

HERE = Path(__file__).parent


@pytest.fixture(scope="module")
def interpreted(tmp_path_factory):
    out = tmp_path_factory.mktemp("kernels") / "kernels.pt"
    root = HERE.parent.parent
    env = dict(
        os.environ,
        TRITON_INTERPRET="1",
        PYTHONPATH=os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]),
    )
    r = subprocess.run(
        [sys.executable, str(HERE / "interpreted_kernels.py"), str(out)],
        env=env,
        capture_output=True,
        text=True,
        cwd=root,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    return torch.load(out, weights_only=False)


CASES = [
    (f, d, o, i) for f in FORMATS for d in DTYPES for o in (False, True) for i in range(len(SHAPES))
]


@pytest.mark.parametrize("fmt,dtype,online,i", CASES)
def test_kernel_shift_equals_official_forward_and_backward(interpreted, fmt, dtype, online, i):
    c = interpreted["shift"][(fmt, dtype, online, i)]
    x = c["x"].clone().requires_grad_()
    want = official_shift(x, c["t"], c["fold_div"], online)
    want.backward(c["grad"])
    assert c["y"].dtype == DTYPES[dtype]
    assert torch.equal(c["y"], want.detach())
    assert torch.equal(c["x_grad"], x.grad)
    fmt_ = FORMATS[fmt]
    assert c["y"].is_contiguous(memory_format=fmt_)
    assert c["x_grad"].is_contiguous(memory_format=fmt_)


@pytest.mark.parametrize("fmt,dtype,online,i", CASES)
def test_in_place_kernel_pair_shifts_like_official_and_restores_exactly(
    interpreted, fmt, dtype, online, i
):
    c = interpreted["in_place"][(fmt, dtype, online, i)]
    assert torch.equal(c["inside"], official_shift(c["x"], c["t"], c["fold_div"], online))
    assert torch.equal(c["after"], c["x"]) and c["after"].stride() == c["x"].stride()


@pytest.mark.parametrize(
    "fmt,dtype,i", [(f, d, i) for f in FORMATS for d in DTYPES for i in range(2)]
)
def test_kernel_online_step_equals_official_online_shift(interpreted, fmt, dtype, i):
    """Step ``t`` of the stream is frame ``t`` of the official online shift of the clip; the
    buffer after step ``t`` is frame ``t``'s channels ``[0:fold]``, kept in the same storage."""
    c = interpreted["step"][(fmt, dtype, i)]
    frames = c["frames"]
    n, ch = frames[0].shape[:2]
    fold = ch // c["fold_div"]
    clip = torch.stack(frames, 1).flatten(0, 1)  # (N*T, C, H, W), T = 3
    want = official_shift(clip, 3, c["fold_div"], online=True).unflatten(0, (n, 3))
    for t, (out, buf) in enumerate(zip(c["outs"], c["buffers"])):
        assert torch.equal(out, want[:, t])
        assert out.is_contiguous(memory_format=FORMATS[fmt])
        assert torch.equal(buf, frames[t][:, :fold])
    assert c["same_storage"]


def test_kernel_step_refuses_a_buffer_in_another_memory_format(interpreted):
    msg = interpreted["refusal"]
    assert "(1, 2, 4, 4)" in msg and "(1, 16, 4, 4)" in msg and "channels_last=True" in msg


def test_cpu_shift_never_imports_the_kernel():
    code = (
        "import sys, torch; from tsm_apps.models.shift import temporal_shift;"
        "from tsm_apps.models.shift.layer import TemporalShift;"
        "x = torch.randn(4, 16, 3, 3); temporal_shift(x, 2);"
        "TemporalShift(torch.nn.Identity(), 2)(x);"
        "print('tsm_apps.models.shift.kernel' in sys.modules, 'triton' in sys.modules)"
    )
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=HERE.parent.parent
    )
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split() == ["False", "False"]


@pytest.mark.parametrize("shift", ["offline", "online"])
def test_model_through_the_kernel_equals_the_cpu_path(interpreted, shift):
    """The same ResNet-18 TSM with its shifts on the kernel (interpreted) and on the CPU path
    (held against the official shift by test_shift.py): equal logits, input and weight
    gradients, and online, equal static-buffer steps across ``reset()``."""
    c = interpreted["model"][shift]
    m = build_recognizer("resnet18", 5, 4, shift, width=0.125).eval()
    m.load_state_dict(c["state"])
    with torch.no_grad():
        assert torch.equal(m(c["x"]), c["logits"])
    x = c["x"].clone().requires_grad_()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as the kernel's side: the weight gradient's sum order
    try:
        m(x).square().sum().backward()
    finally:
        torch.set_num_threads(threads)
    assert torch.equal(x.grad, c["x_grad"])
    assert torch.equal(m.backbone.layer1[0].conv1.net.weight.grad, c["w_grad"])
    if shift == "online":
        torch.set_num_threads(1)  # as the kernel's side (MKL's strict mode rounds by threads)
        try:
            with OnlineRecognizer(m, mode="eager") as rec:
                want = [rec.step(c["x"][:, t]) for t in range(3)]
                rec.reset()
                want.append(rec.step(c["x"][:, 3]))
        finally:
            torch.set_num_threads(threads)
        assert all(torch.equal(a, b) for a, b in zip(want, c["steps"]))


def same_bits(got: torch.Tensor, want: torch.Tensor) -> bool:
    """Equal dtype and values bit for bit (``-0.0`` is not ``0.0``), NaN where NaN is."""
    if got.dtype != want.dtype or got.shape != want.shape:
        return False
    nan = got.isnan()
    if not torch.equal(nan, want.isnan()):
        return False
    bits = {2: torch.int16, 4: torch.int32}[got.element_size()]
    zero = torch.zeros((), dtype=got.dtype)
    a, b = torch.where(nan, zero, got), torch.where(nan, zero, want)
    return torch.equal(a.contiguous().view(bits), b.contiguous().view(bits))


RESIDUAL_CASES = [
    (f, d, o, i, grads, fold)
    for f in FORMATS
    for d in DTYPES
    for o in (False, True)
    for i, grads, fold in [(0, "both", None), (1, "both", None), (2, "both", None)]
    + [(0, "y", None), (0, "z", None), (0, "both", 0)]
]


@pytest.mark.parametrize("fmt,dtype,online,i,grads,fold", RESIDUAL_CASES)
def test_fused_epilogue_equals_relu_add_then_official_shift(
    interpreted, fmt, dtype, online, i, grads, fold
):
    """``(relu(a + b), shift(relu(a + b)))`` from one launch, and its one-launch backward,
    against ``torch.relu(a + b)`` and the official shift with autograd through them, bit for
    bit (NaN, infinities, ``-0.0`` and overflowing sums included). The two gradients of ``y``
    (its own and the shift's) are two terms, so autograd's order of summing them cannot
    change a bit: the comparison is exact in every dtype."""
    shape, t, fold_div = SHAPES[i]
    fold = shape[1] // fold_div if fold is None else fold
    c = interpreted["residual"][(fmt, dtype, online, i, grads, fold)]
    a, b = c["a"].clone().requires_grad_(), c["b"].clone().requires_grad_()
    y = torch.relu(a + b)
    z = official_shift(y, t, fold_div if fold else shape[1] + 1, online)
    outs = {"both": [y, z], "y": [y], "z": [z]}[grads]
    torch.autograd.backward(
        outs, {"both": [c["gy"], c["gz"]], "y": [c["gy"]], "z": [c["gz"]]}[grads]
    )
    assert same_bits(c["y"], y.detach()) and same_bits(c["z"], z.detach())
    assert same_bits(c["a_grad"], a.grad) and same_bits(c["b_grad"], b.grad)
    assert c["y"].isnan().any() and c["a_grad"].ne(0).any()  # the special values were there
    for v in (c["y"], c["z"], c["a_grad"]):
        assert v.is_contiguous(memory_format=FORMATS[fmt])


@pytest.mark.parametrize("arch,shift", FUSED_MODELS)
def test_fused_stages_equal_the_default_model(interpreted, arch, shift):
    """A ResNet whose stages write each shifted block's input in the previous block's epilogue
    (``cuda_shift_path("fused")``, kernels interpreted) against the same weights on the default
    CPU path: equal logits and input and weight gradients, bit for bit; one fused launch per
    pair of blocks inside a stage per forward (ResNet-18: 1 per stage, ResNet-50: 2, 3, 5, 2).
    A block with a hook runs its own forward (its pair unfused); a stream stepping online
    (ResNet-18 online, static buffers) keeps its own shift."""
    c = interpreted["fused_model"][(arch, shift)]
    assert c["stage_type"] == ResidualShiftStage.__name__
    assert c["launches"] == 2 * {"resnet18": 4, "resnet50": 12}[arch]
    m = build_recognizer(arch, 5, 4, shift, width=0.125).eval()
    m.load_state_dict(c["state"])
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as the kernel's side: the weight gradient's sum order
    try:
        with torch.no_grad():
            assert torch.equal(m(c["x"]), c["logits"])
        x = c["x"].clone().requires_grad_()
        m(x).square().sum().backward()
    finally:
        torch.set_num_threads(threads)
    assert torch.equal(x.grad, c["x_grad"])
    grads = dict(m.named_parameters())
    assert set(grads) == set(c["w_grads"])
    for k, g in c["w_grads"].items():
        assert torch.equal(grads[k].grad, g), k
    if "hooked" in c:  # layer2.0 hooked: its pair runs unfused, the hook sees its call
        assert c["hooked_launches"] == (3, 1) and torch.equal(c["hooked"], c["logits"])
    if "steps" in c:  # a stream's steps never take the fused epilogue: as the eager steps
        torch.set_num_threads(1)
        try:
            with OnlineRecognizer(m, mode="eager") as rec:
                want = [rec.step(c["x"][:, t]) for t in range(3)]
        finally:
            torch.set_num_threads(threads)
        assert all(torch.equal(a, b) for a, b in zip(want, c["steps"]))
        assert c["step_launches"] == 0
