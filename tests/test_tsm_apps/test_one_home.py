"""Each idea that is written as a literal has one home: the ImageNet mean/std, the official test
scale ``256 // 224``, the multi-scale crop list, opening a video (``av.open``), reading a
checkpoint (``torch.load``) and the ImageNet-VID ``Annotations`` folder appear in the code
(docstrings aside) of their home modules only, across every product package; so does a record of
a frame's boxes with their scores or labels (detections, ground truth), opening a recognizer
checkpoint (building a model from a file read, loading one into a model: ``open_checkpoint`` is
the way in) and reading a JSON file (``json.load``, ``json.loads(<file>.read_text())``: the
one reader is ``tsm_apps.io.read_json``; the benchmarks and tools too)."""

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("tsm_apps", "detection", "dissect", "ui")
MEAN, STD = (
    {0.485, 0.456, 0.406, 123.675, 116.28, 103.53},
    {0.229, 0.224, 0.225, 58.395, 57.12, 57.375},
)
CROP_SCALES = {0.875, 0.75, 0.66}
ANNOTATIONS = re.compile(r"(^|/)Annotations(/|$)")
CHECKPOINT_OPENERS = {"inspect_checkpoint", "build_from_checkpoint", "load_weights"}
FILE_READS = {"read_text", "read_bytes", "read"}


def _docstrings(tree: ast.AST) -> set:
    out = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(body, list)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            out.add(id(body[0].value))
    return out


def _numbers(node: ast.AST) -> set:
    return {
        e.value
        for e in getattr(node, "elts", ())
        if isinstance(e, ast.Constant) and isinstance(e.value, float)
    }


def _call_of(node: ast.AST, module: str, name: str) -> bool:
    f = getattr(node, "func", None)
    return (
        isinstance(node, ast.Call)
        and isinstance(f, ast.Attribute)
        and f.attr == name
        and isinstance(f.value, ast.Name)
        and f.value.id == module
    )


def _called(node: ast.AST) -> str:
    """The name a call calls (``f(...)`` or ``x.f(...)``), else ``""``."""
    f = getattr(node, "func", None) if isinstance(node, ast.Call) else None
    return getattr(f, "attr", getattr(f, "id", "")) if f is not None else ""


def _json_file_read(node: ast.AST) -> bool:
    """``json.load(file)`` or ``json.loads(<x>.read_text() / .read_bytes() / .read())``."""
    return _call_of(node, "json", "load") or (
        _call_of(node, "json", "loads") and bool(node.args) and _called(node.args[0]) in FILE_READS
    )


def _official_scale(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, (ast.FloorDiv, ast.Div))
        and isinstance(node.right, ast.Constant)
        and node.right.value == 224
        and any(isinstance(n, ast.Constant) and n.value == 256 for n in ast.walk(node.left))
    )


def _frame_boxes_record(node: ast.AST) -> bool:
    """A class whose fields hold a frame's boxes with their scores or labels."""
    if not isinstance(node, ast.ClassDef):
        return False
    fields = {
        s.target.id
        for s in node.body
        if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
    }
    return bool(fields & {"boxes", "bboxes"}) and bool(fields & {"scores", "labels", "label_ids"})


IDEAS = {  # idea: (home files or folders, does this node write it?)
    "ImageNet mean/std": (
        (
            "tsm_apps/data/normalization.py",
            "detection/configs/",
        ),  # mmdet dict configs are data: literals
        lambda n: (
            isinstance(n, (ast.List, ast.Tuple))
            and (len(_numbers(n) & MEAN) >= 2 or len(_numbers(n) & STD) >= 2)
        ),
    ),
    "256 // 224": (("tsm_apps/data/protocol.py",), _official_scale),
    "multi-scale crop list": (
        ("tsm_apps/data/transforms.py",),
        lambda n: isinstance(n, (ast.List, ast.Tuple)) and len(_numbers(n) & CROP_SCALES) >= 2,
    ),
    "av.open": (
        ("tsm_apps/data/video.py", "tsm_apps/data/decoder.py", "tsm_apps/data/video_writer.py"),
        lambda n: _call_of(n, "av", "open"),
    ),
    "torch.load": (("tsm_apps/io.py",), lambda n: _call_of(n, "torch", "load")),
    '"Annotations"': (
        ("tsm_apps/data/vid_layout.py",),
        lambda n: (
            isinstance(n, ast.Constant)
            and isinstance(n.value, str)
            and bool(ANNOTATIONS.search(n.value))
        ),
    ),
    "a frame's detections / ground truth": (("detection/records.py",), _frame_boxes_record),
    "opening a recognizer checkpoint": (
        ("tsm_apps/checkpoint/",),
        lambda n: _called(n) in CHECKPOINT_OPENERS,
    ),
    "reading a JSON file": (("tsm_apps/io.py",), _json_file_read),
}
# ideas held beyond the product packages (scripts beside them read with the product's reader)
SCOPE = {"reading a JSON file": PACKAGES + ("benchmarks", "tools")}


def sites(source: str, found) -> list:
    """Line numbers where ``found(node)`` holds, docstrings left out."""
    tree = ast.parse(source)
    docs = _docstrings(tree)
    return sorted({n.lineno for n in ast.walk(tree) if id(n) not in docs and found(n)})


def offenders(idea: str) -> dict:
    """``{file: [lines]}`` writing ``idea`` outside its homes."""
    homes, found = IDEAS[idea]
    out = {}
    for pkg in SCOPE.get(idea, PACKAGES):
        for f in sorted((ROOT / pkg).rglob("*.py")):
            rel = f.relative_to(ROOT).as_posix()
            if rel.startswith(homes):
                continue
            lines = sites(f.read_text(), found)
            if lines:
                out[rel] = lines
    return out


def test_the_finders_see_each_idea_and_not_its_words():
    src = (
        '"""Reads Annotations/VID/x.xml; crop * 256 // 224."""\n'
        "import av, torch\n"
        "m = (0.485, 0.456, 0.406)\n"
        "s = size * 256 // 224\n"
        "c = [1, .875, .75, .66]\n"
        "v = av.open(p)\n"
        "w = torch.load(p, weights_only=True)\n"
        "a = root / 'Annotations' / 'VID'\n"
        "b = f'{root}/Annotations/VID'\n"
        "ok = (0.5, 0.875, 224, 256 + 224, 'MyAnnotations', av.opened(p))\n"
        "class Dets:\n    bboxes: object\n    scores: object\n"
        "class Box:\n    boxes: object\n    name: str\n"
        "j = json.loads(Path(p).read_text())\n"
        "k = (json.load(f), json.loads(open(p).read()))\n"
        "net = ckpt.build_from_checkpoint(d, p)\n"
        "load_weights(model, p, checkpoint=d)\n"
        "ok2 = (json.loads(line), json.dumps(j), read_json(p), open_checkpoint(p), load_w(p))\n"
    )
    got = {idea: sites(src, found) for idea, (_, found) in IDEAS.items()}
    assert got == {
        "ImageNet mean/std": [3],
        "256 // 224": [4],
        "multi-scale crop list": [5],
        "av.open": [6],
        "torch.load": [7],
        '"Annotations"': [8, 9],
        "a frame's detections / ground truth": [11],
        "opening a recognizer checkpoint": [19, 20],
        "reading a JSON file": [17, 18],
    }


# Files that still write an idea outside its home when this test was written, each to be moved
# there by its owner (then its entry goes); any other file writing one fails the test.
PENDING: dict = {}


@pytest.mark.parametrize("idea", list(IDEAS))
def test_each_literal_idea_lives_in_its_home(idea):
    found = offenders(idea)
    assert set(found) <= PENDING.get(idea, set()), found
