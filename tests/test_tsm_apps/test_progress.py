"""tsm_apps.progress: a bar is drawn only when the command's --progress is on and stderr is a
terminal; a bar not drawn passes its items through silently; no other module imports tqdm."""

from __future__ import annotations

import ast
import io
import sys
from pathlib import Path

from tsm_apps.progress import progress_bar, shown
from tsm_apps.synth.jobs import run_jobs

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("tsm_apps", "detection", "dissect", "ui", "benchmarks", "tools")


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class NoIsatty:
    def write(self, text: str) -> int:
        return len(text)


def test_drawn_on_a_terminal_when_enabled(monkeypatch):
    term = Terminal()
    monkeypatch.setattr(sys, "stderr", term)
    assert shown(True) and not shown(False)
    assert list(progress_bar([10, 20, 30], desc="clips", unit="clip")) == [10, 20, 30]
    text = term.getvalue()
    assert text.startswith("\rclips:   0%|") and "| 0/3 [00:00<?, ?clip/s]" in text


def test_not_drawn_when_disabled_or_off_a_terminal(monkeypatch):
    for stream, enabled in ((Terminal(), False), (io.StringIO(), True)):
        monkeypatch.setattr(sys, "stderr", stream)
        assert list(progress_bar(range(4), desc="videos", enabled=enabled)) == [0, 1, 2, 3]
        with progress_bar(desc="steps", total=5, enabled=enabled) as bar:
            bar.set_postfix(loss="0.5000", refresh=False)
            bar.update(1)
        assert stream.getvalue() == ""
    monkeypatch.setattr(sys, "stderr", NoIsatty())
    assert not shown(True)


def test_a_commands_progress_option_reaches_its_bar(monkeypatch):
    # tsm synth's --progress / --no-progress arrive as run_jobs(progress=...)
    for progress, drawn in ((True, True), (False, False)):
        term = Terminal()
        monkeypatch.setattr(sys, "stderr", term)
        assert run_jobs(abs, [-1, -2, 3], workers=1, progress=progress, desc="synth x") == [1, 2, 3]
        assert ("\rsynth x:   0%|" in term.getvalue()) is drawn
        assert (" 0/3 [00:00<?, ?video/s]" in term.getvalue()) is drawn


def _imports(path: Path) -> set:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_no_module_but_progress_imports_tqdm():
    found = [
        p.relative_to(ROOT).as_posix()
        for top in SCANNED
        for p in sorted((ROOT / top).rglob("*.py"))
        if "tqdm" in _imports(p)
    ]
    assert found == ["tsm_apps/progress.py"]
