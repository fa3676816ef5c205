"""A detector config is read as data: plain configs load, anything else is refused in one line
and never runs."""

from __future__ import annotations

import pytest

from ui.app.sources.config_data import ConfigRefused, checked_copy, literal_config

PLAIN = """model = dict(type='ClipRFCN', backbone=dict(depth=-1, scale=(1000, 600), ratio=+0.5),
    test_cfg=dict(rcnn=dict(nms=dict(iou_threshold=0.3)), keys=['a', "b"]), flag=None)
custom_imports = dict(imports=['detection'], allow_failed_imports=False)
meta = {'classes': ('car', 'dog'), 2: [1.5, True]}
"""


def test_plain_config_is_read_exactly():
    cfg = literal_config(PLAIN, "config.py")
    assert cfg == {
        "model": {
            "type": "ClipRFCN",
            "backbone": {"depth": -1, "scale": (1000, 600), "ratio": 0.5},
            "test_cfg": {"rcnn": {"nms": {"iou_threshold": 0.3}}, "keys": ["a", "b"]},
            "flag": None,
        },
        "custom_imports": {"imports": ["detection"], "allow_failed_imports": False},
        "meta": {"classes": ("car", "dog"), 2: [1.5, True]},
    }


@pytest.mark.parametrize(
    "text, line, what",
    [
        ("import os\n", 1, "import os"),
        ("a = 1\nb = open('/tmp/x', 'w')\n", 2, "open('/tmp/x', 'w')"),
        ("a = dict(**other)\n", 1, "dict(**other)"),
        ("_base_ = ['../base.py']\n", 1, "_base_ = ['../base.py']"),
        ("dict = print\n", 1, "dict = print"),
        ("a = __import__('os').system('true')\n", 1, "__import__('os').system('true')"),
        ("a = [x for x in range(3)]\n", 1, "[x for x in range(3)]"),
        ("a = b\n", 1, "b"),
        ("def f():\n    pass\n", 1, "def f():"),
        ("a = 1 + 2\n", 1, "1 + 2"),
    ],
)
def test_anything_but_data_is_refused_naming_the_line(text, line, what):
    with pytest.raises(ConfigRefused) as e:
        literal_config(text, "runs/detection/tsm/config.py")
    msg = str(e.value)
    assert (
        msg.startswith(
            f"runs/detection/tsm/config.py:{line}: `{what}` is not allowed; a "
            "config is read as data: "
        )
        and "\n" not in msg
    )


def test_custom_imports_other_than_detection_refused():
    with pytest.raises(ConfigRefused, match=r"c.py: custom_imports \['os'\]: only \['detection'\]"):
        literal_config("custom_imports = dict(imports=['detection', 'os'])\n", "c.py")
    assert literal_config("custom_imports = dict(imports='detection.hooks')\n", "c.py")


def test_checked_copy_holds_the_checked_text(tmp_path):
    src = tmp_path / "config.py"
    src.write_text(PLAIN)
    out = tmp_path / "private"
    out.mkdir()
    copy = checked_copy(src, out)
    assert copy == out / "config.py" and copy.read_text() == PLAIN
    assert oct(copy.stat().st_mode & 0o777) == "0o600"
    marker = tmp_path / "ran"
    src.write_text(f"model = dict()\nopen({str(marker)!r}, 'w')\n")
    (out / "config.py").unlink()
    with pytest.raises(ConfigRefused, match=r"config.py:2: `open\("):
        checked_copy(src, out)
    assert not marker.exists() and not (out / "config.py").exists()
