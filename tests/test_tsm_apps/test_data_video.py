"""Video reading/writing: frame folders (exact), mp4/mkv/avi (near), sparse seeking, errors."""

import pickle

import av
import numpy as np
import pytest
from PIL import Image

from tsm_apps.data import decoder
from tsm_apps.data.decoder import VideoDecodeError
from tsm_apps.data.video import count_frames, read_video_frames
from tsm_apps.data.video_writer import write_video


def smooth_clip(t=40, h=48, w=64):
    """Smooth frames whose brightness encodes the frame index (survive H.264 nearly intact)."""
    yy, xx = np.mgrid[0:h, 0:w]
    base = (xx * 2 + yy)[..., None] * np.array([1, 0.5, 0.25])
    out = [np.clip(base + 5 * i, 0, 255) for i in range(t)]
    return np.stack(out).astype(np.uint8)


@pytest.fixture(scope="module")
def mp4(tmp_path_factory):
    frames = smooth_clip()
    path = write_video(
        tmp_path_factory.mktemp("v") / "clip.mp4", frames, fps=10, keyframe_interval=5
    )
    return path, frames


def test_mp4_near_round_trip_and_counts(mp4):
    path, frames = mp4
    assert count_frames(path) == 40 and count_frames(path, exact=True) == 40
    got = read_video_frames(path, range(40))
    assert got.shape == frames.shape and got.dtype == np.uint8
    err = np.abs(got.astype(int) - frames)
    assert err.mean() < 2.0 and err.max() <= 24


def test_sparse_unsorted_repeated_indices_match_full_decode(mp4):
    path, _ = mp4
    full = read_video_frames(path, range(40))
    idx = [37, 2, 2, 20, 0, 39, 21]
    np.testing.assert_array_equal(read_video_frames(path, idx), full[idx])
    np.testing.assert_array_equal(read_video_frames(path, np.array([39])), full[[39]])


def test_sparse_read_seeks_instead_of_decoding_everything(tmp_path, monkeypatch):
    path = write_video(
        tmp_path / "long.mp4", smooth_clip(t=100, h=32, w=32), fps=10, keyframe_interval=10
    )
    decoded = []
    real_open = decoder.open_video

    class Spy:
        def __init__(self, c):
            self.c = c

        def __getattr__(self, name):
            return getattr(self.c, name)

        def decode(self, *a, **k):
            for f in self.c.decode(*a, **k):
                decoded.append(f.pts)
                yield f

    monkeypatch.setattr(decoder, "open_video", lambda p: Spy(real_open(p)))
    read_video_frames(path, [1, 95])
    assert 0 < len(decoded) <= 20, f"decoded {len(decoded)} frames for 2 wanted of 100"
    decoded.clear()
    read_video_frames(path, range(100))
    assert len(decoded) == 100


@pytest.mark.parametrize("ext", [".mkv", ".avi", ".mov"])
def test_other_containers(tmp_path, ext):
    frames = smooth_clip(t=12, h=32, w=48)
    path = write_video(tmp_path / f"c{ext}", frames, fps=12, keyframe_interval=4)
    assert count_frames(path, exact=True) == 12 and abs(count_frames(path) - 12) <= 1
    got = read_video_frames(path, [11, 0, 6])
    assert np.abs(got.astype(int) - frames[[11, 0, 6]]).mean() < 3.0


def test_frame_folder_exact_round_trip(tmp_path):
    rng = np.random.default_rng(0)
    frames = rng.integers(0, 256, (5, 7, 9, 3), dtype=np.uint8)
    for i, f in enumerate(frames):
        Image.fromarray(f).save(tmp_path / f"img_{i + 1:05d}.png")
    kw = dict(frame_template="img_{:05d}.png")
    assert count_frames(tmp_path, **kw) == 5
    np.testing.assert_array_equal(
        read_video_frames(tmp_path, [3, 0, 3, 4], **kw), frames[[3, 0, 3, 4]]
    )
    np.testing.assert_array_equal(
        read_video_frames(tmp_path, [2], frame_template="img_%05d.png"), frames[[2]]
    )
    with pytest.raises(VideoDecodeError, match=r"frame 5 \(img_00006.png\) is missing"):
        read_video_frames(tmp_path, [1, 5], **kw)


def test_frame_folder_imagenet_vid_naming(tmp_path):
    frames = np.stack([np.full((4, 6, 3), 10 * i, np.uint8) for i in range(3)])
    for i, f in enumerate(frames):
        Image.fromarray(f).save(tmp_path / f"{i:06d}.png")
    kw = dict(frame_template="{:06d}.png", start_index=0)
    assert count_frames(tmp_path, **kw) == 3
    assert count_frames(tmp_path) == 0  # default template img_00001.jpg: nothing there
    np.testing.assert_array_equal(read_video_frames(tmp_path, range(3), **kw), frames)


def test_frame_folder_corrupt_image(tmp_path):
    Image.fromarray(np.zeros((4, 4, 3), np.uint8)).save(tmp_path / "img_00001.jpg")
    (tmp_path / "img_00002.jpg").write_bytes(b"not a jpeg")
    with pytest.raises(VideoDecodeError, match="img_00002.jpg"):
        read_video_frames(tmp_path, [0, 1])


def test_corrupt_file(tmp_path):
    bad = tmp_path / "bad.mp4"
    bad.write_bytes(np.random.default_rng(0).bytes(4000))
    with pytest.raises(VideoDecodeError, match="bad.mp4: cannot open"):
        read_video_frames(bad, [0])
    with pytest.raises(VideoDecodeError, match="bad.mp4"):
        count_frames(bad)


def test_truncated_file_without_index(mp4, tmp_path):
    data = mp4[0].read_bytes()
    cut = tmp_path / "cut.mp4"
    cut.write_bytes(data[: len(data) // 2])  # the moov atom is at the end: gone
    with pytest.raises(VideoDecodeError, match="cut.mp4"):
        read_video_frames(cut, [0])


def test_truncated_file_with_index_up_front(tmp_path):
    frames = smooth_clip(t=30, h=32, w=32)
    path = tmp_path / "fast.mp4"
    with av.open(str(path), "w", options={"movflags": "faststart"}) as c:
        s = c.add_stream("libx264", rate=10)
        s.width, s.height, s.pix_fmt = 32, 32, "yuv420p"
        for f in frames:
            c.mux(s.encode(av.VideoFrame.from_ndarray(f, format="rgb24")))
        c.mux(s.encode(None))
    data = path.read_bytes()
    cut = tmp_path / "fast_cut.mp4"
    cut.write_bytes(data[: int(len(data) * 0.6)])
    assert count_frames(cut) == 30  # the header still says 30
    assert count_frames(cut, exact=True) < 30  # the packets say otherwise
    with pytest.raises(
        VideoDecodeError, match=r"fast_cut.mp4: frame 29 .*container lists 30 \(truncated"
    ):
        read_video_frames(cut, [0, 29])


def test_zero_frame_empty_and_missing_files(tmp_path):
    zero = tmp_path / "zero.mkv"
    with av.open(str(zero), "w") as c:
        s = c.add_stream("libx264", rate=10)
        s.width, s.height, s.pix_fmt = 32, 32, "yuv420p"
        c.start_encoding()
    with pytest.raises(VideoDecodeError, match="zero.mkv"):
        read_video_frames(zero, [0])
    empty = tmp_path / "empty.mp4"
    empty.write_bytes(b"")
    with pytest.raises(VideoDecodeError, match="empty.mp4: file is empty"):
        read_video_frames(empty, [0])
    with pytest.raises(VideoDecodeError, match="nope.mp4: file not found"):
        read_video_frames(tmp_path / "nope.mp4", [0])


def test_index_beyond_end_and_bad_indices(mp4):
    path, _ = mp4
    with pytest.raises(VideoDecodeError, match="frame 40 requested but the video has 40 frames"):
        read_video_frames(path, [3, 40])
    with pytest.raises(ValueError, match=">= 0"):
        read_video_frames(path, [-1])
    with pytest.raises(ValueError, match="1-D"):
        read_video_frames(path, np.zeros((2, 2), int))
    with pytest.raises(ValueError, match="no frame indices"):
        read_video_frames(path, [])


def test_error_type_message_and_pickling(tmp_path):
    e = VideoDecodeError(tmp_path / "a.mp4", "video has zero frames")
    assert isinstance(e, RuntimeError)
    assert str(e) == f"{tmp_path / 'a.mp4'}: video has zero frames"
    e2 = pickle.loads(pickle.dumps(e))
    assert (e2.path, e2.reason, str(e2)) == (e.path, e.reason, str(e))


def test_write_video_checks_and_atomic(tmp_path):
    frames = smooth_clip(t=3, h=16, w=16)
    with pytest.raises(ValueError, match="even width and height, got 15x16"):
        write_video(tmp_path / "odd.mp4", frames[:, :, :15], fps=5)
    with pytest.raises(ValueError, match="no frames"):
        write_video(tmp_path / "none.mp4", frames[:0], fps=5)
    with pytest.raises(ValueError, match="uint8"):
        write_video(tmp_path / "f.mp4", frames.astype(np.float32), fps=5)
    with pytest.raises(ValueError, match="cannot write"):
        write_video(tmp_path / "x.gif", frames, fps=5)
    path = write_video(tmp_path / "sub" / "ok.mp4", frames, fps=5)
    write_video(path, frames[:2], fps=5)  # overwrite in place
    assert count_frames(path, exact=True) == 2
    assert sorted(p.name for p in path.parent.iterdir()) == ["ok.mp4"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sub"]


def test_webm_vp9_like_something_something(tmp_path):
    frames = smooth_clip(t=20, h=32, w=48)
    path = tmp_path / "78687.webm"
    with av.open(str(path), "w") as c:
        s = c.add_stream("libvpx-vp9", rate=12)
        s.width, s.height, s.pix_fmt = 48, 32, "yuv420p"
        s.codec_context.gop_size = 6
        for f in frames:
            c.mux(s.encode(av.VideoFrame.from_ndarray(f, format="rgb24")))
        c.mux(s.encode(None))
    assert count_frames(path) == 20 and count_frames(path, exact=True) == 20
    full = read_video_frames(path, range(20))
    assert np.abs(full.astype(int) - frames).mean() < 3.0
    np.testing.assert_array_equal(read_video_frames(path, [19, 4, 13]), full[[19, 4, 13]])


def test_edit_list_discarded_frames_are_not_counted(tmp_path):
    """Packets before an mp4 edit list's start are never output: frame 0 is the first shown."""
    frames = np.stack([np.full((32, 32, 3), 8 * i, np.uint8) for i in range(30)])
    src = write_video(tmp_path / "src.mp4", frames, fps=10, keyframe_interval=30)
    dst = tmp_path / "trimmed.mp4"
    with av.open(str(src)) as ic, av.open(str(dst), "w") as oc:
        ist = ic.streams.video[0]
        ost = oc.add_stream_from_template(ist)
        step = int(1 / (ist.time_base * ist.average_rate))
        for p in ic.demux(ist):
            if p.size:
                p.pts, p.dts, p.stream = p.pts - 3 * step, p.dts - 3 * step, ost
                oc.mux(p)
    assert count_frames(dst, exact=True) == 27
    got = read_video_frames(dst, [0, 26])
    assert np.allclose([g.mean() for g in got], [8 * 3, 8 * 29], atol=2)  # shown frames 3 and 29
    with pytest.raises(VideoDecodeError, match="frame 27 requested but the video has 27 frames"):
        read_video_frames(dst, [27])


def test_frame_stream_refuses_bad_files_as_the_reader_does(mp4, tmp_path):
    """The lazy stream opens files as :func:`read_video_frames` does: the same one-line errors
    for an empty, a missing and an audio-only file, and the frames of a good one."""
    from tsm_apps.data.video import frame_stream

    empty = tmp_path / "empty.mp4"
    empty.write_bytes(b"")
    with pytest.raises(VideoDecodeError, match="empty.mp4: file is empty"):
        next(frame_stream(empty))
    with pytest.raises(VideoDecodeError, match="nope.mp4: file not found"):
        next(frame_stream(tmp_path / "nope.mp4"))
    audio = tmp_path / "audio.m4a"
    with av.open(str(audio), "w") as c:
        s = c.add_stream("aac", rate=8000)
        frame = av.AudioFrame.from_ndarray(
            np.zeros((1, 1024), np.float32), format="fltp", layout="mono"
        )
        frame.sample_rate = 8000
        for packet in [*s.encode(frame), *s.encode(None)]:
            c.mux(packet)
    with pytest.raises(VideoDecodeError, match="audio.m4a: no video stream"):
        next(frame_stream(audio))
    path, frames = mp4
    sizes = [size for size, _ in frame_stream(path)]
    assert sizes == [(64, 48)] * len(frames)
