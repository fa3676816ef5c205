"""Training clips: videos decoded once into memory, clips sampled and augmented per request.

Decoding an mp4 every epoch costs more than a narrow model's step on CPU, so :class:`ClipSet`
keeps every video's frames as uint8 ``(F, H, W, 3)`` and samples from memory (``cache=False``
decodes the sampled frames per request instead). A request is an index or ``(index, T, S)``:
the clip shape may change from batch to batch (multigrid). Each clip's randomness (segment
offsets, crop, flip) comes from a generator seeded by ``(seed, epoch, index)``, so a clip is the
same whatever process, worker or resume point asks for it.

Output: float ``(T, 3, S, S)`` normalised with the ImageNet mean/std, and the label.
Sampling follows TSN: ``T`` equal segments, a random frame in each for training, the middle
frame for evaluation.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Optional, Sequence, Union

import torch
from torch import Tensor
from torch.nn import functional as F
from torch.utils.data import Dataset

from ..data.lists import VideoRecord as ClipRecord  # one line of a TSM list file
from ..data.lists import read_tsm_list as read_list  # (list_file, root=None): file:line errors
from ..data.sampling import sample_test
from ..data.transforms import GroupMultiScaleCrop, fixed_offsets

MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)
Key = Union[int, Sequence[int]]


def segment_indices(num_frames: int, t: int, train: bool, g: torch.Generator) -> list:
    """TSN sampling: one frame per equal segment (random in training, the middle otherwise).

    Evaluation is :func:`tsm_apps.data.sampling.sample_test`. Training draws a continuous
    offset per segment from ``g`` (the clip set's per-clip torch seeding), which also covers
    videos shorter than ``t`` (the official sampler returns all zeros for those)."""
    if num_frames < 1 or t < 1:
        raise ValueError(f"need num_frames >= 1 and t >= 1, got {num_frames}, {t}")
    seg = num_frames / t
    if train:
        off = torch.rand(t, generator=g).tolist()
        return [min(int(seg * i + off[i] * seg), num_frames - 1) for i in range(t)]
    return sample_test(num_frames, t).tolist()


def crop_box(h: int, w: int, min_area: float, g: torch.Generator) -> tuple:
    """Random crop ``(y, x, ch, cw)`` covering ``[min_area, 1]`` of the area, aspect 3/4..4/3."""
    area = h * w * (min_area + (1 - min_area) * torch.rand(1, generator=g).item())
    log_r = math.log(3 / 4) + (math.log(4 / 3) - math.log(3 / 4)) * torch.rand(1, generator=g).item()
    r = math.exp(log_r)
    cw = min(w, max(1, int(round(math.sqrt(area * r)))))
    ch = min(h, max(1, int(round(math.sqrt(area / r)))))
    y = int(torch.randint(0, h - ch + 1, (1,), generator=g))
    x = int(torch.randint(0, w - cw + 1, (1,), generator=g))
    return y, x, ch, cw


def multiscale_box(h: int, w: int, size: int, g: torch.Generator) -> tuple:
    """TSN's ``GroupMultiScaleCrop(size, [1, .875, .75, .66])`` as a box ``(y, x, ch, cw)``:
    a ``(crop_h, crop_w)`` pair (scale indices at most 1 apart) at one of 13 fixed offsets."""
    gm = GroupMultiScaleCrop(size)
    pairs = gm.crop_pairs(h, w)
    ch, cw = pairs[int(torch.randint(len(pairs), (1,), generator=g))]
    offs = fixed_offsets(h, w, ch, cw, True)
    y, x = offs[int(torch.randint(len(offs), (1,), generator=g))]
    return y, x, ch, cw


def train_box(h: int, w: int, crop: str, min_area: float, size: int,
              g: torch.Generator) -> tuple:
    """The training crop of ``crop`` mode: ``"area"`` (:func:`crop_box`) or ``"multiscale"``."""
    return multiscale_box(h, w, size, g) if crop == "multiscale" else crop_box(h, w, min_area, g)


def to_input(frames: Tensor, size: int, box: Optional[tuple], flip: bool) -> Tensor:
    """uint8 ``(T, H, W, 3)`` -> normalised float ``(T, 3, size, size)`` (crop ``box`` or centre)."""
    if frames.dim() != 4 or frames.shape[-1] != 3:
        raise ValueError(f"expected uint8 frames (T, H, W, 3), got {tuple(frames.shape)}")
    h, w = frames.shape[1:3]
    if box is None:  # centre square
        side = min(h, w)
        box = ((h - side) // 2, (w - side) // 2, side, side)
    y, x, ch, cw = box
    x_ = frames[:, y:y + ch, x:x + cw].permute(0, 3, 1, 2).float().div_(255)
    if (ch, cw) != (size, size):
        x_ = F.interpolate(x_, size=(size, size), mode="bilinear", align_corners=False,
                           antialias=True)
    if flip:
        x_ = x_.flip(-1)
    mean = x_.new_tensor(MEAN).view(1, 3, 1, 1)
    std = x_.new_tensor(STD).view(1, 3, 1, 1)
    return (x_ - mean) / std


class ClipSet(Dataset):
    """Clips of the videos in ``records``; ``set_epoch`` changes the training randomness."""

    def __init__(self, records: Sequence[ClipRecord], train: bool, num_segments: int, size: int,
                 min_area: float = 0.5, flip: bool = False, seed: int = 0,
                 cache: bool = True, progress: bool = False,
                 frames: Optional[Sequence[Tensor]] = None, crop: str = "area") -> None:
        self.records = list(records)
        self.crop = crop
        self.train, self.num_segments, self.size = train, num_segments, size
        self.min_area, self.flip, self.seed = min_area, flip, seed
        self.epoch = 0
        self.frames: Optional[list] = list(frames) if frames is not None else None
        if cache and self.frames is None:
            self.frames = [self._decode(r, range(r.num_frames))
                           for r in _maybe_tqdm(self.records, progress, "decoding videos")]

    @classmethod
    def from_tensor(cls, videos: Tensor, labels: Sequence[int], train: bool, num_segments: int,
                    size: int, **kw) -> "ClipSet":
        """In-memory clips from uint8 videos ``(N, F, H, W, 3)`` (tests, synthetic data)."""
        if videos.dim() != 5 or videos.shape[-1] != 3 or videos.dtype != torch.uint8:
            raise ValueError(f"videos must be uint8 (N, F, H, W, 3), got {videos.dtype} "
                             f"{tuple(videos.shape)}")
        if len(labels) != len(videos):
            raise ValueError(f"{len(videos)} videos but {len(labels)} labels")
        records = [ClipRecord(Path(f"<memory:{i}>"), videos.shape[1], int(lab))
                   for i, lab in enumerate(labels)]
        return cls(records, train, num_segments, size, frames=list(videos), **kw)

    @property
    def labels(self) -> list:
        return [r.label for r in self.records]

    def __len__(self) -> int:
        return len(self.records)

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    @staticmethod
    def _decode(r: ClipRecord, indices: Sequence[int]) -> Tensor:
        from ..data.video import read_video_frames  # PyAV only when decoding
        return torch.from_numpy(read_video_frames(r.path, list(indices)))

    def generator(self, index: int) -> torch.Generator:
        mix = ((self.seed * 1_000_003 + self.epoch) * 1_000_003 + index) % (2 ** 63)
        return torch.Generator().manual_seed(mix)

    def __getitem__(self, key: Key) -> tuple:
        index, t, s = (key, self.num_segments, self.size) if isinstance(key, int) else key
        r = self.records[index]
        g = self.generator(index)
        n = len(self.frames[index]) if self.frames is not None else r.num_frames
        idx = segment_indices(n, t, self.train, g)
        frames = (self.frames[index][idx] if self.frames is not None else self._decode(r, idx))
        box, flip = None, False
        if self.train:
            box = train_box(frames.shape[1], frames.shape[2], self.crop, self.min_area, s, g)
            flip = self.flip and bool(torch.rand(1, generator=g) < 0.5)
        return to_input(frames, s, box, flip), r.label


def _maybe_tqdm(items: Sequence, enabled: bool, desc: str):
    if not enabled:
        return items
    try:
        from tqdm import tqdm
    except ImportError:
        return items
    return tqdm(items, desc=desc, leave=False)
