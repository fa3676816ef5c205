"""Models loaded once per server and used by every session: weights shared, state per use.

The app caches each loaded model once (``st.cache_resource``). What a model holds besides its
weights — the online shift buffers of a stream, a detector's stream position, CAM hooks, the
number of segments a clip sets — must never be shared: two sessions streaming through one
module would overwrite each other's buffers. :func:`session_copy` gives each use its own module
tree whose parameters and buffers *are* the loaded model's tensors (no copy of the weights, read
only: the app runs models in eval mode under ``no_grad`` or for input gradients only).
"""

from __future__ import annotations

import copy
import itertools
from typing import Any


def session_copy(module: Any) -> Any:
    """A deep copy of the ``torch.nn.Module`` ``module`` that shares its parameters and buffers
    (the same tensor objects) and copies everything else (submodules, attributes, state)."""
    tensors = itertools.chain(module.parameters(), module.buffers())
    return copy.deepcopy(module, {id(t): t for t in tensors})
