"""``tools/check_citations.py`` on a fabricated reference repository and recipe table: a right
citation holds; a line past the end of the file, a line holding another value, a file the
repository does not have and a paragraph citing a missing line are each reported, with exit 1."""

from __future__ import annotations

import pytest

from tools import check_citations

SCRIPT = """# You should get model_e50.pth
python main.py kinetics RGB \\
     --lr 0.02 --epochs 50 \\
     --dropout 0.5
"""
HEADER = """# Recipes

## preset demo

The demo recipe (`model_e50.pth`, TSM run.sh:{prose}).

| parameter | reference | ours | source | why ours differs |
|---|---|---|---|---|
"""


@pytest.fixture(scope="module")
def tool():
    return check_citations


@pytest.fixture
def ref(tmp_path):
    root = tmp_path / "ref"
    (root / "ops").mkdir(parents=True)
    (root / "run.sh").write_text(SCRIPT)
    (root / "ops" / "models.py").write_text("x = 1\nlr_mult = 5 if flow else 1\n")
    return root


def run(tool, tmp_path, ref, rows, prose=1, capsys=None):
    doc = tmp_path / "recipes.md"
    doc.write_text(HEADER.format(prose=prose) + "".join(r + "\n" for r in rows))
    code = tool.main(["--doc", str(doc), "--repo", f"TSM={ref}"])
    return code, capsys.readouterr().out


RIGHT = [
    "| `lr_per_8` | `0.00125` | | TSM run.sh:3 `--lr 0.02` | |",
    "| `epochs` | `50` | | TSM run.sh:3 | |",
    "| `dropout` | `None` | `0.5` | TSM ops/models.py:2 `lr_mult` | the script's (run.sh:4) |",
]


def test_right_citations_hold(tool, tmp_path, ref, capsys):
    code, out = run(tool, tmp_path, ref, RIGHT, capsys=capsys)
    assert code == 0, out
    # 1 + 1 + 2 in the table, 1 in the paragraph
    assert "5 of 5 citations hold" in out


@pytest.mark.parametrize(
    "row, why",
    [
        ("| `epochs` | `50` | | TSM run.sh:9 | |", "TSM run.sh has 4 lines, line 9 cited"),
        ("| `epochs` | `100` | | TSM run.sh:3 | |", "hold none of (no word) nor the value 100"),
        (
            "| `lr_per_8` | `0.00125` | | TSM run.sh:4 `--lr 0.02` | |",
            "hold none of '--lr 0.02' nor the value 0.00125",
        ),
        (
            "| `dropout` | `None` | `0.5` | TSM ops/models.py:2 `lr_mult` "
            "| the script's (run.sh:3) |",
            "hold none of (no word) nor the value 0.5",
        ),
        ("| `epochs` | `50` | | TSM main.py:3 | |", "main.py is not a file of TSM"),
    ],
)
def test_a_wrong_citation_fails_naming_its_doc_line(tool, tmp_path, ref, capsys, row, why):
    code, out = run(tool, tmp_path, ref, RIGHT + [row], capsys=capsys)
    assert code == 1
    bad = [line for line in out.splitlines() if line.startswith("recipes.md:")]
    assert len(bad) == 1 and bad[0].startswith("recipes.md:12: ") and why in bad[0], out


def test_a_paragraph_citing_a_missing_line_fails(tool, tmp_path, ref, capsys):
    code, out = run(tool, tmp_path, ref, RIGHT, prose=5, capsys=capsys)
    assert code == 1
    assert "recipes.md:5: 'TSM run.sh:5': TSM run.sh has 4 lines, line 5 cited" in out


def test_a_missing_checkout_is_a_usage_error(tool, tmp_path, capsys):
    assert tool.main(["--repo", f"TSM={tmp_path / 'nope'}"]) == 2
    assert "expected KEY=FOLDER with an existing folder" in capsys.readouterr().err
