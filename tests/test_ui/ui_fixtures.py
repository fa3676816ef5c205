"""Tiny runs folders for the UI tests, built with the packages' own APIs at tiny sizes:
synthetic data from ``tsm_apps.data``, random-weight recognizers and detectors from
``tools.random_models``, dissection runs from ``dissect.job``."""

from __future__ import annotations

import json
from pathlib import Path

from tools.random_models import SMALL_PROTOCOL, tiny_recognizer

SIZE = 32


def write_temporal_data(root: Path) -> Path:
    """The synthetic temporal set at tiny size (``val.txt``, ``annotations.json``, videos/)."""
    from tsm_apps.synth import temporal as synth_temporal

    synth_temporal.generate(root, videos=6, frames=8, size=SIZE, seed=0)
    return root


def write_dissection_runs(
    runs: Path, data: Path, overlays: bool = False, limit: int = 2, flow: tuple = (None, None)
) -> dict:
    """TSN and TSM checkpoints under ``runs/train/{tsn,tsm}`` and their dissection runs under
    ``runs/dissect/{tsn,tsm}`` (``limit`` clips each, no units/sanity, overlays only when asked,
    to stay fast); ``flow = (flow checkpoint, flow data)``: the TSM run's flow stream."""
    from dissect.job import run_job
    from dissect.job_config import JobConfig
    from tsm_apps.checkpoint.reading import save_checkpoint

    classes = json.loads((data / "annotations.json").read_text())["classes"]
    out = {}
    for seed, (name, shift) in enumerate((("tsn", None), ("tsm", "offline"))):
        ckpt = save_checkpoint(
            runs / "train" / name / "best.pth", tiny_recognizer(shift, len(classes), seed)
        )
        out[name] = runs / "dissect" / name
        fc, fd = flow if name == "tsm" else (None, None)
        run_job(
            JobConfig(
                checkpoint=str(ckpt),
                data=str(data),
                out=str(out[name]),
                limit=limit,
                sanity=False,
                units=False,
                overlays=overlays,
                device="cpu",
                flow_checkpoint=fc and str(fc),
                flow_data=fd and str(fd),
            ),
            progress=False,
        )
    return out


def write_vid_snippet(root: Path, frames: int = 6, h: int = 64, w: int = 96) -> Path:
    """One ImageNet-VID val snippet folder (``Data/VID/val/<snippet>/%06d.JPEG``) of noise
    with a bright square moving right."""
    import numpy as np
    from PIL import Image

    snippet = root / "Data" / "VID" / "val" / "ILSVRC2015_val_00000000"
    snippet.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    for t in range(frames):
        img = rng.integers(0, 80, (h, w, 3), dtype=np.uint8)
        img[20:40, 8 + 10 * t : 28 + 10 * t] = 255
        Image.fromarray(img).save(snippet / f"{t:06d}.JPEG", quality=95)
    return snippet


def write_vid_annotations(
    root: Path, frames: int = 6, h: int = 64, w: int = 96, skip: tuple = ()
) -> Path:
    """Annotations of :func:`write_vid_snippet`'s square (a 'car', inclusive pixel box
    ``8+10t, 20, 27+10t, 39``) as ImageNet-VID XML; frames in ``skip`` have no object."""
    from tsm_apps.data.vid_layout import VIDFrame, VIDObject, frame_to_xml

    folder = root / "Annotations" / "VID" / "val" / "ILSVRC2015_val_00000000"
    folder.mkdir(parents=True, exist_ok=True)
    for t in range(frames):
        objs = [] if t in skip else [VIDObject(0, "n02958343", (8 + 10 * t, 20, 27 + 10 * t, 39))]
        frame = VIDFrame("val/ILSVRC2015_val_00000000", f"{t:06d}", w, h, objs)
        (folder / f"{t:06d}.xml").write_bytes(frame_to_xml(frame))
    return folder


def write_flow_checkpoint(path: Path, classes: int, seed: int = 7) -> Path:
    """A random-weight tiny flow TSM (new_length 5: 10 input channels), class names stored."""
    from tsm_apps.checkpoint.reading import save_checkpoint

    return save_checkpoint(
        path,
        tiny_recognizer("offline", classes, seed, in_channels=10),
        {
            "classes": [f"action {i}" for i in range(classes)],
            "test_protocol": SMALL_PROTOCOL.to_dict(),
        },
    )


def extract_flow(src: Path, out: Path) -> Path:
    """``tsm flow extract SRC --out OUT --method farneback`` (the real extraction, fast)."""
    from tsm_apps.flow.cli import main

    assert (
        main(["extract", str(src), "--out", str(out), "--method", "farneback", "--no-progress"])
        == 0
    )
    return out


def image_urls(at) -> list:
    """URLs of every image an AppTest page shows, in page order."""
    return [img.url for el in at.get("image") for img in el.proto.imgs]


def image_captions(at) -> list:
    """Captions of every image an AppTest page shows, in page order."""
    return [img.caption for el in at.get("image") for img in el.proto.imgs]


def shown_cells(table):
    """The text an AppTest ``st.dataframe`` element shows in each cell (its Styler's display
    values), as a DataFrame of strings."""
    import pyarrow as pa

    data = table.proto.arrow_data.styler.display_values
    return pa.ipc.open_stream(data).read_all().to_pandas()


def captions(at) -> list:
    """Text of every caption of an AppTest page."""
    return [c.value for c in at.caption]


def page_text(at) -> str:
    """Everything an AppTest page holds (every element's fields, main area and sidebar), as
    one text: what a browser would be sent."""
    out, todo = [], [at.main, at.sidebar]
    while todo:
        node = todo.pop()
        children = getattr(node, "children", None)
        if isinstance(children, dict):
            todo.extend(children.values())
        proto = getattr(node, "proto", None)
        if proto is not None:
            out.append(str(proto))
    return "\n".join(out)


def faststart_mp4(src: Path, out: Path) -> Path:
    """``src`` re-encoded (H.264) as an mp4 whose index comes first (``movflags=faststart``)."""
    import av

    with av.open(str(src)) as i, av.open(str(out), "w", options={"movflags": "faststart"}) as o:
        s = o.add_stream("libx264", rate=25)
        first = True
        for f in i.decode(video=0):
            if first:
                s.width, s.height, s.pix_fmt, first = f.width, f.height, "yuv420p", False
            rgb = av.VideoFrame.from_ndarray(f.to_ndarray(format="rgb24"), format="rgb24")
            o.mux(s.encode(rgb.reformat(format="yuv420p")))
        o.mux(s.encode())
    return out


def asgi_scope(
    path: str = "/",
    method: str = "GET",
    kind: str = "http",
    cookie: str | bytes | None = None,
    headers: tuple = (),
    client: str = "10.0.0.1",
) -> dict:
    """An ASGI request (``kind`` "http") or websocket handshake scope to the app at
    127.0.0.1:8501 from ``client``; ``cookie``: the sign-in credential's raw value (bytes: as a
    client may send them), beside another cookie."""
    from ui.gate import COOKIE

    hs = [(b"host", b"127.0.0.1:8501"), *headers]
    if cookie is not None:
        value = cookie.encode() if isinstance(cookie, str) else cookie
        hs.append((b"cookie", f"other=1; {COOKIE}=".encode() + value))
    scope = {
        "type": kind,
        "path": path,
        "headers": hs,
        "scheme": "http" if kind == "http" else "ws",
        "query_string": b"",
        "client": (client, 50000),
    }
    if kind == "http":
        scope["method"] = method
    return scope
