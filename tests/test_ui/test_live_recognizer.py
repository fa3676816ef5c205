"""The app's live recognizer equals the online model run on the whole clip, frame by frame."""

from __future__ import annotations

import numpy as np
import torch

from tools.random_models import SMALL_PROTOCOL, write_checkpoints
from ui.app import sources


def test_stream_equals_clip_mode_and_running_mean(tmp_path):
    path = write_checkpoints(tmp_path)["tsm"]
    rec = sources.load_online(path)
    assert rec.shift == "online"
    frames = np.random.default_rng(0).integers(0, 256, (4, 40, 50, 3), dtype=np.uint8)
    live = sources.LiveRecognizer(rec, SMALL_PROTOCOL)
    other = sources.LiveRecognizer(rec, SMALL_PROTOCOL)  # a second stream on the same model
    probs = [live.step(f) for f in frames]
    other.step(frames[0])
    assert live.seen == 4 and live.cache_bytes > 0
    # reference: the same online model on the whole clip at once (clip mode, T = 4)
    x = torch.cat([sources.prepare_frame(f, SMALL_PROTOCOL) for f in frames])
    with torch.no_grad():
        feats = rec.model.backbone(x)  # (T, C, h, w)
        logits = rec.model.fc(feats.mean(dim=(2, 3)))  # (T, K)
    np.testing.assert_allclose(np.stack(probs), torch.softmax(logits, 1).numpy(), atol=1e-5)
    np.testing.assert_allclose(live.running(), torch.softmax(logits.mean(0), 0).numpy(), atol=1e-5)
