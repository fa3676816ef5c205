"""``tools/check_citations.py`` on a fabricated reference repository and recipe table: a right
citation holds; a line past the end of the file, a line holding another value (or the value
after another key, or a value whose stated conversion is not the row's), a citation stating no
value, a file the repository does not have and a paragraph citing a missing line are each
reported, with exit 1. The rows of docs/recipes.md that cite FGFA's RPN positive IoU and the
official script's ``--gd`` fail when the reference value changes (0.7 -> 0.9, 20 -> 40)."""

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
    "| `lr_per_8` | `0.00125` | | TSM run.sh:3 [--lr = 0.02 x 8 / 128] | |",
    "| `epochs` | `50` | | TSM run.sh:3 [--epochs = 50] | |",
    "| `dropout` | `None` | `0.5` | TSM ops/models.py:2 [prose] `lr_mult` "
    "| the script's (run.sh:4 [--dropout = 0.5]) |",
]


def test_right_citations_hold(tool, tmp_path, ref, capsys):
    code, out = run(tool, tmp_path, ref, RIGHT, capsys=capsys)
    assert code == 0, out
    # 1 + 1 + 2 in the table, 1 in the paragraph
    assert "5 of 5 citations hold" in out


@pytest.mark.parametrize(
    "row, why",
    [
        (
            "| `epochs` | `50` | | TSM run.sh:9 [= 50] | |",
            "TSM run.sh has 4 lines, line 9 cited",
        ),
        (
            "| `epochs` | `100` | | TSM run.sh:3 [--epochs = 100] | |",
            "do not hold 100 after '--epochs'",
        ),
        (  # the old rule: 0.02 is on the line, so any quoted word or value held
            "| `lr_per_8` | `0.00125` | | TSM run.sh:4 [--lr = 0.02 x 8 / 128] `--lr 0.02` | |",
            "do not hold 0.02 after '--lr'",
        ),
        (
            "| `lr_per_8` | `0.00125` | | TSM run.sh:3 [--lr = 0.02 x 8 / 64] | |",
            "state 0.02, which converts to 0.0025, not the row's 0.00125",
        ),
        (  # 50 is on the line, but not after --lr
            "| `epochs` | `50` | | TSM run.sh:3 [--lr = 50] | |",
            "do not hold 50 after '--lr'",
        ),
        (
            "| `dropout` | `None` | `0.5` | TSM ops/models.py:2 [prose] `lr_mult` "
            "| the script's (run.sh:3 [= 0.5]) |",
            "do not hold 0.5 anywhere",
        ),
        (
            "| `dropout` | `None` | | TSM ops/models.py:2 [prose] `lr_mult = 10` | |",
            "do not hold 'lr_mult = 10'",
        ),
        ("| `epochs` | `50` | | TSM run.sh:3 --epochs 50 | |", "states no value"),
        ("| `epochs` | `50` | | TSM main.py:3 [= 50] | |", "main.py is not a file of TSM"),
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


def test_a_malformed_statement_is_a_usage_error_naming_its_line(tool, tmp_path, ref, capsys):
    doc = tmp_path / "recipes.md"
    bad = "| `epochs` | `50` | | TSM run.sh:3 [50] | |"
    doc.write_text(HEADER.format(prose=1) + "".join(r + "\n" for r in RIGHT + [bad]))
    assert tool.main(["--doc", str(doc), "--repo", f"TSM={ref}"]) == 2
    assert capsys.readouterr().err == (
        "error: recipes.md:12: TSM run.sh:3 [50]: statement [50] is not [KEY = VALUE] or [prose]\n"
    )


def test_a_missing_checkout_is_a_usage_error(tool, tmp_path, capsys):
    assert tool.main(["--repo", f"TSM={tmp_path / 'nope'}"]) == 2
    assert "expected KEY=FOLDER with an existing folder" in capsys.readouterr().err


# the real rows of docs/recipes.md that read FGFA's RPN positive IoU and the script's --gd, and
# the lines they cite as the references have them (FGFA f01243e, temporal-shift-module 1f6a834)
FGFA_YAML = "experiments/fgfa_rfcn/cfgs/resnet_v1_101_flownet_imagenet_vid_rfcn_end2end_ohem.yaml"
REFERENCE_LINES = {
    ("FGFA", FGFA_YAML): {101: "  RPN_POSITIVE_OVERLAP: 0.7"},
    ("TSM", "scripts/train_tsm_kinetics_rgb_8f.sh"): {
        4: "     --gd 20 --lr 0.02 --wd 1e-4 --lr_steps 20 40 --epochs 50 \\"
    },
    ("TSM", "main.py"): {
        256: "        if args.clip_gradient is not None:",
        257: "            total_norm = clip_grad_norm_(model.parameters(), args.clip_gradient)",
    },
}
ROWS = {
    "detection/configs/rfcn_r101_vid_tsm_online.py": ["model.train_cfg.rpn.assigner.pos_iou_thr"],
    "preset official": ["optim.clip_grad"],
}


def real_rows_doc(tmp_path):
    """A recipes.md of the real sections' rows in ROWS, as docs/recipes.md writes them."""
    from tools.recipe_table import TABLE, read_table

    lines, table = TABLE.read_text().splitlines(), read_table()
    text = "# Recipes\n"
    for section, params in ROWS.items():
        text += f"\n## {section}\n\n| parameter | reference | ours | source | why ours differs |\n"
        text += "|---|---|---|---|---|\n"
        text += "".join(lines[r.line - 1] + "\n" for r in table[section] if r.parameter in params)
    doc = tmp_path / "recipes.md"
    doc.write_text(text)
    return doc


def references(tmp_path, change=None):
    """The cited reference files (other lines blank), with ``change = (old, new)`` applied."""
    out = {}
    for (key, path), cited in REFERENCE_LINES.items():  # several files of one repository
        body = [cited.get(n, "") for n in range(1, max(cited) + 1)]
        if change:
            body = [line.replace(*change) for line in body]
        f = tmp_path / key / path
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text("\n".join(body) + "\n")
        out[key] = tmp_path / key
    return out


@pytest.mark.parametrize(
    "change, failing",
    [
        (None, 0),
        (("RPN_POSITIVE_OVERLAP: 0.7", "RPN_POSITIVE_OVERLAP: 0.9"), 1),
        (("--gd 20", "--gd 40"), 1),
    ],
)
def test_a_changed_reference_value_fails_the_real_rows(tool, tmp_path, capsys, change, failing):
    doc = real_rows_doc(tmp_path)
    repos = references(tmp_path, change)
    code = tool.main(
        ["--doc", str(doc)] + sum((["--repo", f"{k}={v}"] for k, v in repos.items()), [])
    )
    out = capsys.readouterr().out
    assert code == (1 if failing else 0), out
    assert f"{3 - failing} of 3 citations hold" in out  # yaml:101; sh:4 and main.py:256-257
    if change:
        assert f"do not hold {change[0].split()[-1]}" in out, out
