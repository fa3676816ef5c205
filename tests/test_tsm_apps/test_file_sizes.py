"""Every tracked Python file of the product packages, the tools, the benchmarks and the tests is
at most 300 lines (the project's budget per file), counted as ``wc -l`` counts them: newline
characters. A file over it is named with its count."""

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ("tsm_apps", "detection", "dissect", "ui", "tools", "benchmarks", "tests")
MAX_LINES = 300


def tracked_python_files(root: Path = ROOT, folders: tuple = FOLDERS) -> list:
    """Paths (relative to ``root``) of the ``.py`` files git tracks under ``folders``; every
    ``.py`` file under them when ``root`` is not a git checkout."""
    r = subprocess.run(
        ["git", "-C", str(root), "ls-files", "-z", "--", *folders], capture_output=True
    )
    if r.returncode != 0:
        found = (f for d in folders for f in (root / d).rglob("*.py"))
        return sorted(str(f.relative_to(root)) for f in found)
    return sorted(p for p in r.stdout.decode().split("\0") if p.endswith(".py"))


def over_budget(root: Path, paths: list, limit: int = MAX_LINES) -> list:
    """``"path: N lines"`` for each file of ``paths`` (relative to ``root``) longer than
    ``limit`` lines; a tracked file missing from the work tree has no lines to count."""
    counts = {p: (root / p).read_bytes().count(b"\n") for p in paths if (root / p).is_file()}
    return [f"{p}: {n} lines" for p, n in sorted(counts.items()) if n > limit]


def test_the_counter_counts_like_wc_and_names_the_files_over_the_budget(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "ok.py").write_text("x = 1\n" * 3)
    (tmp_path / "a" / "long.py").write_text("x = 1\n" * 4)
    (tmp_path / "a" / "no_newline.py").write_text("x = 1\n" * 3 + "y = 2")  # wc -l: 3
    paths = ["a/long.py", "a/no_newline.py", "a/ok.py", "a/gone.py"]
    assert over_budget(tmp_path, paths, limit=3) == ["a/long.py: 4 lines"]


def test_the_lister_takes_the_tracked_files_and_every_file_outside_git(tmp_path):
    (tmp_path / "a" / "b").mkdir(parents=True)
    for name in ("a/one.py", "a/b/two.py", "a/new.py", "a/notes.txt"):
        (tmp_path / name).write_text("x = 1\n")
    assert tracked_python_files(tmp_path, ("a",)) == ["a/b/two.py", "a/new.py", "a/one.py"]
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "add", "a/one.py", "a/b/two.py"], check=True)
    assert tracked_python_files(tmp_path, ("a",)) == ["a/b/two.py", "a/one.py"]


def test_the_checkouts_files_cover_every_folder():
    files = tracked_python_files()
    assert {"tsm_apps/__init__.py", "tools/check_citations.py", "ui/app/main.py"} <= set(files)
    assert {f.split("/")[0] for f in files} == set(FOLDERS)


def test_every_python_file_is_at_most_300_lines():
    assert over_budget(ROOT, tracked_python_files()) == []
