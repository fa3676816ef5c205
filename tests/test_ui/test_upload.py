"""Uploads: size limit, undecodable files, temporary copies always removed."""
from __future__ import annotations

import numpy as np
import pytest

from ui.app import upload


@pytest.fixture(autouse=True)
def private_tmp(tmp_path, monkeypatch):
    """Temporary copies go to a folder of this test only, so leftovers can be counted."""
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path


def test_size_limit_and_empty():
    with pytest.raises(upload.UploadError, match=r"'v.mp4' is 2.0 MB; the limit is 1.0 MB"):
        upload.check_size("v.mp4", 2 * 2**20, 2**20)
    with pytest.raises(upload.UploadError, match="empty"):
        upload.check_size("v.mp4", 0, 2**20)
    upload.check_size("v.mp4", 2**20, 2**20)  # exactly at the limit is fine


def test_not_a_video_gives_message_and_leaves_nothing():
    with pytest.raises(upload.UploadError, match="'junk.mp4' is not a video this app can decode"):
        upload.decode_upload("junk.mp4", b"this is not a video" * 100, 2**20, 8)
    assert upload.leftover_uploads() == []


def test_temporary_copy_removed_on_error():
    with pytest.raises(RuntimeError):
        with upload.temporary_copy("../../evil.mp4", b"x") as p:
            assert p.name == "evil.mp4" and p.read_bytes() == b"x"
            assert upload.leftover_uploads() != []
            raise RuntimeError
    assert upload.leftover_uploads() == []


def test_decodes_a_real_video(tmp_path):
    from tsm_apps.data.video import write_video
    rng = np.random.default_rng(0)
    frames = rng.integers(0, 255, (6, 32, 48, 3), dtype=np.uint8)
    path = write_video(tmp_path / "ok.mp4", frames, fps=5)
    out = upload.decode_upload("ok.mp4", path.read_bytes(), 2**20, max_frames=4)
    assert out.frames.shape == (4, 32, 48, 3) and out.frames.dtype == np.uint8
    assert out.total == 6 and out.cut
    assert upload.leftover_uploads() == []


def test_uploaded_checkpoint_kept_once_per_content_under_its_name(private_tmp):
    import hashlib

    data = b"\x80\x02checkpoint bytes"
    a = upload.keep_checkpoint("TSM_kinetics_RGB_resnet50_shift8_blockres_avg_segment8_e50.pth",
                               data, max_bytes=1024)
    digest = hashlib.sha256(data).hexdigest()[:16]
    assert a == private_tmp / "tsm_ui_checkpoints" / digest / a.name
    assert a.name.startswith("TSM_kinetics_RGB_resnet50") and a.read_bytes() == data
    mtime = a.stat().st_mtime_ns
    assert upload.keep_checkpoint(a.name, data, max_bytes=1024) == a  # same content: same file
    assert a.stat().st_mtime_ns == mtime
    assert upload.keep_checkpoint("x.pth", b"other", max_bytes=1024).parent != a.parent
    with pytest.raises(upload.UploadError, match="limit"):
        upload.keep_checkpoint("big.pth", b"0" * 2048, max_bytes=1024)

