"""A bounded in-memory store for expensive results (detections, attention maps).

``st.cache_data`` cannot report progress from inside the cached function, so long work is
computed by the page (with a progress bar) and kept here; the store itself is created once per
server with ``st.cache_resource`` (see :func:`ui.app.cache.result_store`).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Callable, Hashable

import streamlit as st

DEFAULT_CAPACITY = 16


class ResultStore:
    """Least-recently-used map ``key -> result`` holding at most ``capacity`` entries."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        if capacity < 1:
            raise ValueError(f"capacity must be >= 1, got {capacity}")
        self.capacity = capacity
        self._items: OrderedDict = OrderedDict()
        self._lock = threading.Lock()

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            return key in self._items

    def __len__(self) -> int:
        return len(self._items)

    def get_or_compute(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        """The stored result for ``key``, else ``compute()`` stored under ``key``."""
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        value = compute()
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.capacity:
                self._items.popitem(last=False)
        return value


@st.cache_resource(show_spinner=False)
def result_store() -> ResultStore:
    """The server-wide store (one per Streamlit process)."""
    return ResultStore()
