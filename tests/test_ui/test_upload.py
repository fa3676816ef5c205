"""Uploads: size limit, decoded-size limit with downscaling, undecodable files, safe names,
temporary copies always removed, checkpoints kept in the session's folder."""

from __future__ import annotations

import numpy as np
import pytest

from tools.sample_videos import sample_video
from ui.app.settings import DecodeLimits
from ui.app.sources import uploads as upload

LIMITS = DecodeLimits(max_frames=300, short_side=360, max_pixels=70_000_000)


@pytest.fixture(autouse=True)
def private_tmp(tmp_path, monkeypatch):
    """Temporary copies go to a folder of this test only, so leftovers can be counted."""
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path


def test_size_limit_and_empty():
    with pytest.raises(upload.UploadError, match=r"^`v.mp4` is 2.0 MB; the limit is 1 MB\.$"):
        upload.check_size("v.mp4", 2 * 2**20, 2**20)
    with pytest.raises(upload.UploadError, match="empty"):
        upload.check_size("v.mp4", 0, 2**20)
    upload.check_size("v.mp4", 2**20, 2**20)  # exactly at the limit is fine


def test_not_a_video_names_the_file_without_errno_or_temporary_path(private_tmp):
    for data in (b"this is not a video" * 100, b"\x00\x00\x00\x18ftypmp42" + b"x" * 200):
        with pytest.raises(upload.UploadError) as e:
            upload.decode_upload("junk.mp4", data, 2**20, LIMITS)
        msg = str(e.value)
        assert msg.startswith("`junk.mp4` is not a video this app can decode (") and msg.endswith(
            ")."
        )
        assert "Errno" not in msg and str(private_tmp) not in msg and "\n" not in msg
        assert upload.leftover_uploads() == []


@pytest.mark.parametrize(
    "name, safe",
    [
        ("..", "upload"),
        (".", "upload"),
        ("", "upload"),
        ("../../evil.mp4", "evil.mp4"),
        ("..\\..\\evil.mp4", "evil.mp4"),
        (".hidden.mp4", "upload"),
        ("a b/c d.mp4", "c_d.mp4"),
        ("clip\x00.mp4", "clip_.mp4"),
        ("TSM_kinetics_RGB_50.pth", "TSM_kinetics_RGB_50.pth"),
        ("x" * 300 + ".pth", "x" * 116 + ".pth"),
    ],
)
def test_safe_names(name, safe):
    assert upload.safe_name(name, "upload") == safe


def test_temporary_copy_removed_on_error():
    with pytest.raises(RuntimeError):
        with upload.temporary_copy("../../evil.mp4", b"x") as p:
            assert p.name == "evil.mp4" and p.read_bytes() == b"x"
            assert upload.leftover_uploads() != []
            raise RuntimeError
    assert upload.leftover_uploads() == []
    with upload.temporary_copy("..", b"y") as p:  # a name that is a folder reference
        assert p.name == "upload" and p.read_bytes() == b"y"
    assert upload.leftover_uploads() == []


def test_decodes_a_small_video_whole(tmp_path):
    from tsm_apps.data.video_writer import write_video

    rng = np.random.default_rng(0)
    frames = rng.integers(0, 255, (6, 32, 48, 3), dtype=np.uint8)
    path = write_video(tmp_path / "ok.mp4", frames, fps=5)
    out = upload.decode_upload("ok.mp4", path.read_bytes(), 2**20, DecodeLimits(4, 360, 10**6))
    assert out.frames.shape == (4, 32, 48, 3) and out.frames.dtype == np.uint8
    assert out.total == 6 and out.cut and out.source_size == (48, 32) and out.scale == 1.0
    assert upload.leftover_uploads() == []


def test_high_resolution_upload_is_downscaled_and_cut_by_decoded_size():
    """bigbuckbunny.mp4: 132 frames of 1280x720 (1.5 MB). At a shorter side of 360 px it
    decodes to 640x360 = 230,400 pixels a frame, so a budget of 2,000,000 pixels keeps 8."""
    from PIL import Image

    from tsm_apps.data.video import read_video_frames

    data = sample_video("bigbuckbunny.mp4").read_bytes()
    out = upload.decode_upload("bunny.mp4", data, 50 * 2**20, DecodeLimits(300, 360, 2_000_000))
    assert out.frames.shape == (8, 360, 640, 3)
    assert (out.total, out.source_size, out.scale) == (132, (1280, 720), 0.5)
    full = read_video_frames(sample_video("bigbuckbunny.mp4"), [0, 7])
    for got, ref in zip(out.frames[[0, 7]], full):  # independent reference: PIL's area resize
        small = np.asarray(Image.fromarray(ref).resize((640, 360), Image.Resampling.BOX))
        assert np.abs(got.astype(int) - small.astype(int)).mean() < 3.0
    whole = upload.decode_upload("bunny.mp4", data, 50 * 2**20, LIMITS)
    assert whole.frames.shape == (132, 360, 640, 3) and not whole.cut
    assert upload.leftover_uploads() == []


def test_uploaded_checkpoint_kept_once_per_content_under_its_safe_name(tmp_path):
    import hashlib

    folder = tmp_path / "session"
    data = b"\x80\x02checkpoint bytes"
    a = upload.keep_checkpoint(
        "TSM_kinetics_RGB_resnet50_shift8_blockres_avg_segment8_e50.pth",
        data,
        max_bytes=1024,
        folder=folder,
    )
    digest = hashlib.sha256(data).hexdigest()[:16]
    assert a == folder / digest / a.name
    assert a.name.startswith("TSM_kinetics_RGB_resnet50") and a.read_bytes() == data
    mtime = a.stat().st_mtime_ns
    assert upload.keep_checkpoint(a.name, data, max_bytes=1024, folder=folder) == a
    assert a.stat().st_mtime_ns == mtime  # same content: same file, not written again
    assert upload.keep_checkpoint("x.pth", b"other", 1024, folder).parent != a.parent
    dots = upload.keep_checkpoint("..", b"dots", 1024, folder)
    assert dots == folder / hashlib.sha256(b"dots").hexdigest()[:16] / "upload.pth"
    assert dots.read_bytes() == b"dots"
    with pytest.raises(upload.UploadError, match="limit"):
        upload.keep_checkpoint("big.pth", b"0" * 2048, max_bytes=1024, folder=folder)
