"""tsm_apps.lazy: the packages' names load on first use (checked in a fresh interpreter)."""

import subprocess
import sys

import pytest

CODE = """
import sys
import tsm_apps, tsm_apps.models, tsm_apps.checkpoint, tsm_apps.train
import tsm_apps.models.modality
light = 'torchvision' not in sys.modules and 'tsm_apps.train.run' not in sys.modules
from tsm_apps import TemporalShift, load_checkpoint
from tsm_apps.models import build_recognizer
from tsm_apps.train import train
import tsm_apps.models.shift.layer, tsm_apps.models.recognizer, tsm_apps.checkpoint.reading
import tsm_apps.train.run
same = (TemporalShift is tsm_apps.models.shift.layer.TemporalShift
        and build_recognizer is tsm_apps.models.recognizer.build_recognizer
        and load_checkpoint is tsm_apps.checkpoint.reading.load_checkpoint
        and train is tsm_apps.train.run.train)
cached = 'TemporalShift' in vars(tsm_apps) and 'train' in vars(tsm_apps.train)
print(light, same, cached)
"""


def test_names_load_on_first_use_and_are_the_modules_objects():
    out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "True", "True"]


def test_unknown_names_and_dir():
    import tsm_apps
    import tsm_apps.models
    import tsm_apps.train

    with pytest.raises(AttributeError, match="module 'tsm_apps.models' has no attribute 'nope'"):
        tsm_apps.models.nope
    assert {"build_recognizer", "TemporalShift", "OnlineRecognizer"} <= set(dir(tsm_apps))
    assert "train" in dir(tsm_apps.train) and "train" in tsm_apps.train.__all__
    assert "TrainConfig" in tsm_apps.train.__all__
