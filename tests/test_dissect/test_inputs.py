"""A dissection job's inputs: the checkpoint is opened once (the way ``tsm test`` opens it), its
model, class names and test protocol come with it."""

import torch

from dissect.inputs import check_inputs
from tests.test_tsm_apps.toy_videos import motion_videos, write_frame_folders
from tsm_apps import build_recognizer
from tsm_apps.checkpoint.reading import save_checkpoint


def test_the_checkpoint_is_read_once_and_opened_as_tsm_test_opens_it(tmp_path, monkeypatch):
    seen, real = [], torch.load
    monkeypatch.setattr(torch, "load", lambda f, *a, **k: seen.append(str(f)) or real(f, *a, **k))
    torch.manual_seed(0)
    model = build_recognizer("resnet18", num_classes=2, num_segments=4, width=0.125)
    path = tmp_path / "best.pth"
    save_checkpoint(path, model, meta={"classes": ["a", "b"], "train_config": {"size": 32}})
    videos, labels = motion_videos(1, frames=8, size=32)
    write_frame_folders(tmp_path, videos, labels, val_every=1)
    checked = check_inputs(
        str(path), str(tmp_path / "val.txt"), segments=2, protocol_options={"clips": 2}
    )
    assert seen == [str(path)]
    assert checked.names == ["a", "b"] and checked.num_classes == 2
    assert checked.checkpoint.num_segments == 2 and not checked.checkpoint.model.training
    assert (checked.protocol.clips, checked.protocol.crop_size) == (2, 32)  # the recorded size
    assert len(checked.entries) == 2 * len(labels)  # 2 clips per video
