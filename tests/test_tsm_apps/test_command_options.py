"""The same idea has the same option in every ``tsm`` command (synth, flow, train, test, live,
export, bench, detect, dissect, ui, demo), each built from its dataclass by
:mod:`tsm_apps.options`: clip length ``--segments``, the device ``--device``, the output
``--out``, class names ``--classes``, progress bars ``--progress/--no-progress``, parallel
processes ``--workers``; no command spells them another way, and every option has help."""

import argparse

import pytest

from tsm_apps.bench.cli import build_parser as bench_parser
from tsm_apps.checkpoint.export import build_parser as export_parser
from tsm_apps.evaluation.cli import build_parser as tsm_test_parser
from tsm_apps.flow.cli import build_parser as flow_parser
from tsm_apps.live.cli import build_parser as live_parser
from tsm_apps.synth.cli import build_parser as synth_parser
from tsm_apps.train.cli import build_parser as train_parser


def flags(parser) -> set:
    """The flags ``--help`` shows, of the parser and its sub-commands (hidden deprecated
    aliases left out)."""
    out = set()
    for action in parser._actions:
        if action.help != argparse.SUPPRESS:
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


def demo_parser():
    from ui.pipeline.demo import build_parser

    return build_parser()


PARSERS = {
    "synth": synth_parser,
    "flow": flow_parser,
    "train": train_parser,
    "test": tsm_test_parser,
    "live": live_parser,
    "export": export_parser,
    "bench": bench_parser,
    "dissect": dissect_parser,
    "detect": detect_parser,
    "ui": ui_parser,
    "demo": demo_parser,
}
SHARED = {
    "synth": {"--out", "--seed", "--size", "--workers", "--progress", "--no-progress"},
    "flow": {"--out", "--workers", "--progress", "--no-progress"},
    "train": {
        "--segments",
        "--device",
        "--out",
        "--seed",
        "--size",
        "--scale-size",
        "--workers",
        "--progress",
        "--no-progress",
    },
    "test": {
        "--segments",
        "--device",
        "--out",
        "--classes",
        "--clips",
        "--crops",
        "--size",
        "--scale-size",
        "--view",
        "--no-progress",
    },
    "live": {"--device", "--out", "--progress", "--no-progress"},
    "export": {"--segments", "--out", "--size"},
    "dissect": {
        "--segments",
        "--device",
        "--out",
        "--classes",
        "--clips",
        "--size",
        "--scale-size",
        "--view",
        "--no-progress",
    },
    "detect": {"--out", "--device", "--no-progress", "--cfg-options"},
    "bench": {"--out", "--device"},
    "ui": {"--runs", "--port", "--host", "--max-frames", "--allow-root"},
    "demo": {"--out", "--seed", "--workers", "--port"},
}
OTHER_SPELLINGS = {
    "--num-segments",
    "--t",
    "--clip-len",
    "--num-frames",
    "--quiet",
    "--input-size",
    "--gpu",
    "--jobs",
    "--num-workers",
    "--procs",
    "--nproc",
    "--threads",
    "--no-progress-bar",
    "--output",
    "--work-root",
}


def test_all_eleven_commands_are_covered():
    from pathlib import Path

    import tomllib

    project = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())
    assert set(PARSERS) == set(project["project"]["entry-points"]["tsm.commands"])


@pytest.mark.parametrize("command", sorted(PARSERS))
def test_shared_ideas_have_one_spelling(command):
    have = flags(PARSERS[command]())
    assert SHARED[command] <= have
    assert not have & OTHER_SPELLINGS


def test_the_demo_still_takes_the_old_jobs_flag_hidden():
    from tsm_apps.options import options_from
    from ui.pipeline.demo import DemoOptions

    parser = demo_parser()
    assert options_from(DemoOptions, parser.parse_args(["--jobs", "3"])).workers == 3
    assert options_from(DemoOptions, parser.parse_args(["--workers", "2"])).workers == 2
    assert "--jobs" not in parser.format_help()


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
        run = dict(
            next(a for a in PARSERS[command]()._actions if isinstance(a.choices, dict)).choices
        )["run"]
        assert "dataset (20% of pixels) or max20 (20% of max)" in " ".join(
            run.format_help().split()
        )


@pytest.mark.parametrize("command", sorted(PARSERS))
def test_every_option_of_every_command_has_help(command):
    # each (sub-)command's --help page explains each of its options and arguments
    for parser in _subparsers(PARSERS[command]()):
        for action in parser._actions:
            if action.help == argparse.SUPPRESS or isinstance(action.choices, dict):
                continue  # a hidden deprecated alias; the sub-command list
            name = "/".join(action.option_strings) or action.dest
            assert action.help and action.help.strip(), f"tsm {command}: {name} has no help"
            shown = " ".join(parser.format_help().split())
            assert " ".join(action.help.replace("%%", "%").split()[:3]) in shown, name


def _pages(parser, path=()):
    """``(path of sub-command names, parser)`` of the parser and its sub-commands."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action.choices, dict):
            for name, sub in action.choices.items():
                yield from _pages(sub, (*path, name))


@pytest.mark.parametrize("command", sorted(PARSERS))
def test_tsm_command_help_shows_every_option_with_its_help(command, capsys):
    # through the installed `tsm` command, as a user types it: `tsm <cmd> [<sub>] --help`
    from tsm_apps.cli import main

    for path, parser in _pages(PARSERS[command]()):
        try:
            rc = main([command, *path, "--help"])
        except SystemExit as e:
            rc = e.code
        page = " ".join(capsys.readouterr().out.split())
        assert rc in (0, None) and page.startswith("usage: tsm"), (command, path)
        for action in parser._actions:
            if action.help == argparse.SUPPRESS or isinstance(action.choices, dict):
                continue
            name = action.option_strings[0] if action.option_strings else action.dest
            words = " ".join(action.help.replace("%%", "%").split()[:4])
            assert name in page and words in page, (command, path, name)
