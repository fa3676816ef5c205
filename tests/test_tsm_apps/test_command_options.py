"""The same idea has the same option in every ``tsm`` command (train, test, export, dissect,
detect, ui), each built from its dataclass: clip length ``--segments``, the
device ``--device``, the output ``--out``, class names ``--classes``, progress bars
``--progress/--no-progress``; no command spells them another way."""
import pytest

from tsm_apps.checkpoint.export import build_parser as export_parser
from tsm_apps.evaluation.cli import build_parser as tsm_test_parser
from tsm_apps.train.cli import build_parser as train_parser


def flags(parser) -> set:
    out = set()
    for action in parser._actions:
        out |= set(action.option_strings)
        if isinstance(action.choices, dict):  # sub-commands
            for sub in action.choices.values():
                out |= flags(sub)
    return out


def dissect_parser():
    from dissect.cli import build_parser
    return build_parser()


def detect_parser():
    from detection.cli import build_parser
    return build_parser()


def ui_parser():
    from ui.cli import build_parser
    return build_parser()


PARSERS = {"train": train_parser, "test": tsm_test_parser, "export": export_parser,
           "dissect": dissect_parser, "detect": detect_parser, "ui": ui_parser}
SHARED = {"train": {"--segments", "--device", "--out", "--progress", "--no-progress"},
          "test": {"--segments", "--device", "--out", "--classes", "--clips", "--crops",
                   "--size", "--scale-size", "--view", "--no-progress"},
          "export": {"--segments", "--out", "--size"},
          "dissect": {"--segments", "--device", "--out", "--classes", "--clips", "--size",
                      "--scale-size", "--view", "--no-progress"},
          "detect": {"--out", "--device", "--no-progress", "--cfg-options"},
          "ui": {"--runs", "--port", "--host", "--max-frames", "--allow-root"}}
OTHER_SPELLINGS = {"--num-segments", "--t", "--clip-len", "--num-frames", "--quiet",
                   "--input-size", "--gpu"}


@pytest.mark.parametrize("command", sorted(PARSERS))
def test_shared_ideas_have_one_spelling(command):
    have = flags(PARSERS[command]())
    assert SHARED[command] <= have
    assert not have & OTHER_SPELLINGS


def _subparsers(parser):
    yield parser
    for action in parser._actions:
        if isinstance(action.choices, dict):
            for sub in action.choices.values():
                yield from _subparsers(sub)


@pytest.mark.parametrize("command", sorted(PARSERS))
def test_every_help_page_renders(command):
    # help texts are plain text: "20% of pixels" in tsm dissect run's --threshold once broke
    # argparse's %-formatting of the whole page
    for parser in _subparsers(PARSERS[command]()):
        page = parser.format_help()
        assert page.startswith("usage:")
    if command == "dissect":
        run = dict(next(a for a in PARSERS[command]()._actions
                        if isinstance(a.choices, dict)).choices)["run"]
        assert "dataset (20% of pixels) or max20 (20% of max)" in " ".join(run.format_help().split())
