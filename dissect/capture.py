"""Activation and gradient capture on named modules, as a context manager.

Inside ``with capture(model, ["backbone.layer4"], gradients=True) as cap:`` every forward pass
stores the output of each named module in ``cap.activations[name]`` and (when gradients are
asked for) the gradient of the loss with respect to that output in ``cap.gradients[name]`` after
``backward``. Gradients are caught with a tensor hook on the module output, so no module
backward hook is needed (those fail on blocks that end in an in-place ReLU). On exit, normal or
by exception, every hook handle added is removed.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Dict, Iterator, Mapping, Sequence, Union

from torch import Tensor, nn

Layers = Union[Sequence[str], Mapping[str, nn.Module]]


class Captured:
    """What a :func:`capture` block recorded: ``activations`` / ``gradients`` by layer name.

    Each value is the latest tensor seen (detached); layouts are those of the module outputs
    (a recognizer trunk layer gives ``(N*T, C, h, w)``).
    """

    def __init__(self) -> None:
        self.activations: Dict[str, Tensor] = {}
        self.gradients: Dict[str, Tensor] = {}

    def clear(self) -> None:
        self.activations.clear()
        self.gradients.clear()


def resolve_layers(model: nn.Module, layers: Layers) -> Dict[str, nn.Module]:
    """Map layer names to sub-modules of ``model``; unknown names raise ``KeyError``."""
    if isinstance(layers, Mapping):
        return dict(layers)
    if isinstance(layers, str):
        raise TypeError(f"layers must be a sequence of names, got the string {layers!r}")
    named = dict(model.named_modules())
    out = {}
    for name in layers:
        if name not in named:
            some = [n for n in named if n][:12]
            raise KeyError(f"model has no module {name!r}; some of its modules: {some}")
        out[name] = named[name]
    return out


def _forward_hook(store: Captured, name: str, gradients: bool):
    def hook(module: nn.Module, inputs, output) -> None:
        if not isinstance(output, Tensor):
            raise TypeError(
                f"capture: module {name!r} returned {type(output).__name__}; "
                "only modules that return a tensor can be captured"
            )
        store.activations[name] = output.detach()
        if gradients and output.requires_grad:

            def keep_grad(grad: Tensor) -> None:
                store.gradients[name] = grad.detach()

            output.register_hook(keep_grad)

    return hook


@contextmanager
def capture(model: nn.Module, layers: Layers, gradients: bool = False) -> Iterator[Captured]:
    """Record outputs (and output gradients) of ``layers`` of ``model`` inside the block.

    ``layers``: module names (as in ``model.named_modules()``) or a ``{name: module}`` mapping.
    """
    modules = resolve_layers(model, layers)
    store = Captured()
    handles = []
    try:
        for name, module in modules.items():
            handles.append(module.register_forward_hook(_forward_hook(store, name, gradients)))
        yield store
    finally:
        for h in handles:
            h.remove()


def hook_count(model: nn.Module) -> int:
    """Number of module hooks of every kind registered anywhere in ``model`` (leak checks)."""
    kinds = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks")
    return sum(len(getattr(m, k, {})) for m in model.modules() for k in kinds)
