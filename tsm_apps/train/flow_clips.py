"""Training/validation clips of the Flow modality (``tsm train --modality flow``).

Records point at flow folders (``tsm flow extract`` writes them with lists whose frame count is
the number of flow fields). Flow fields are kept in memory as uint8 ``(F, H, W, 2)`` per video
(``cache``); a request ``index`` or ``(index, T, S)`` gives float ``(T, 2 * new_length, S, S)``
(:func:`tsm_apps.data.flow.to_flow_input`) and the label. Randomness as in
:class:`~tsm_apps.train.clips.ClipSet`: seeded by ``(seed, epoch, index)``.
"""
from __future__ import annotations

from typing import Sequence

import torch

from ..data.flow import read_flow, segment_starts, stack_indices, to_flow_input
from .clips import ClipRecord, ClipSet, Key, _maybe_tqdm, train_box


class FlowClipSet(ClipSet):
    """Flow clips of ``records`` (flow folders); ``new_length`` fields per segment."""

    def __init__(self, records: Sequence[ClipRecord], train: bool, num_segments: int, size: int,
                 new_length: int = 5, min_area: float = 0.5, flip: bool = False, seed: int = 0,
                 cache: bool = True, progress: bool = False, crop: str = "area") -> None:
        self.new_length = new_length
        super().__init__(records, train, num_segments, size, min_area, flip, seed, cache=False,
                         progress=progress, crop=crop)
        if cache:
            self.frames = [self._decode(r, range(r.num_frames))
                           for r in _maybe_tqdm(self.records, progress, "reading flow")]

    @staticmethod
    def _decode(r: ClipRecord, indices: Sequence[int]) -> torch.Tensor:
        return torch.from_numpy(read_flow(r.path, list(indices)))

    def __getitem__(self, key: Key) -> tuple:
        index, t, s = (key, self.num_segments, self.size) if isinstance(key, int) else key
        r = self.records[index]
        g = self.generator(index)
        n = len(self.frames[index]) if self.frames is not None else r.num_frames
        offsets = torch.rand(t, generator=g).tolist() if self.train else None
        idx = stack_indices(segment_starts(n, t, self.new_length, offsets), self.new_length, n)
        flat = [i for seg in idx for i in seg]
        fields = self.frames[index][flat] if self.frames is not None else self._decode(r, flat)
        stacks = fields.reshape(t, self.new_length, *fields.shape[1:])
        box, flip = None, False
        if self.train:
            box = train_box(stacks.shape[2], stacks.shape[3], self.crop, self.min_area, s, g)
            flip = self.flip and bool(torch.rand(1, generator=g) < 0.5)
        return to_flow_input(stacks, s, box, flip), r.label
