"""tsm_apps.logs: the console log the tsm command sets up around each sub-command (level from
TSM_LOG_LEVEL or the caller, one 'LEVEL logger: message' line a record on stderr, other
libraries from WARNING); print only in the commands and the report writers."""

from __future__ import annotations

import ast
import logging
from pathlib import Path

import pytest

from tsm_apps import cli
from tsm_apps.logs import LEVEL_ENV, StderrHandler, console_log, setup_logging

ROOT = Path(__file__).resolve().parents[2]
# modules whose job is printing a result, besides the commands' own modules
REPORT_WRITERS = {
    "tsm_apps/evaluation/fusion.py",  # tsm test --fuse / --online: the accuracy lines
    "tsm_apps/bench/scaling.py",  # tsm bench scaling: the measured cluster table
    "ui/pipeline/steps.py",  # tsm demo: each step's output, relayed and prefixed
    "tsm_apps/bench/live.py",  # tsm bench live: the exact-cost child process's JSON answer
}
OURS = ("dissect", "ui")  # tsm_apps is always ours
# library modules whose prints became log records
CONVERTED = ("tsm_apps/train/model.py", "tsm_apps/bench/core.py")


def _emit() -> None:
    logging.getLogger("tsm_apps.data.dataset").debug("decoded %d frames", 8)
    logging.getLogger("dissect").info("unit dissection: %s", "done")
    logging.getLogger("somelib").info("not ours, not shown")
    logging.getLogger("somelib").warning("not ours, shown")


def test_level_from_the_environment_in_the_format(monkeypatch, capsys):
    monkeypatch.setenv(LEVEL_ENV, "debug")
    with console_log(packages=OURS) as level:
        _emit()
    assert level == logging.DEBUG
    assert capsys.readouterr().err == (
        "DEBUG tsm_apps.data.dataset: decoded 8 frames\n"
        "INFO dissect: unit dissection: done\n"
        "WARNING somelib: not ours, shown\n"
    )


def test_info_by_default_and_the_callers_level_before_the_environment(monkeypatch, capsys):
    monkeypatch.delenv(LEVEL_ENV, raising=False)
    with console_log(packages=OURS) as level:
        _emit()
    assert level == logging.INFO
    assert capsys.readouterr().err == (
        "INFO dissect: unit dissection: done\nWARNING somelib: not ours, shown\n"
    )
    monkeypatch.setenv(LEVEL_ENV, "DEBUG")
    with console_log("error", OURS) as level:
        _emit()
        logging.getLogger("ui.server").error("closing failed")
    assert level == logging.ERROR
    assert capsys.readouterr().err == "ERROR ui.server: closing failed\n"


def test_set_up_twice_one_line_a_record_and_restored_after(monkeypatch, capsys):
    monkeypatch.delenv(LEVEL_ENV, raising=False)
    root = logging.getLogger()
    before = (root.level, logging.getLogger("tsm_apps").level, list(root.handlers))
    with console_log(packages=OURS):
        setup_logging(packages=OURS)
        logging.getLogger("tsm_apps.x").info("once")
    assert capsys.readouterr().err == "INFO tsm_apps.x: once\n"
    assert (root.level, logging.getLogger("tsm_apps").level, list(root.handlers)) == before
    assert not any(isinstance(h, StderrHandler) for h in root.handlers)


class _Command:
    name = "fake"
    module = "dissect.fake"

    @staticmethod
    def load():
        def main(argv: list) -> int:
            logging.getLogger("dissect.fake").info("working on %s", argv[0])
            logging.getLogger("dissect.fake").debug("details")
            print(f"result of {argv[0]}")
            return 0

        return main


def test_tsm_sets_up_the_log_around_the_command(monkeypatch, capsys):
    monkeypatch.setattr(cli, "commands", lambda: {"fake": _Command})
    monkeypatch.delenv(LEVEL_ENV, raising=False)
    assert cli.main(["fake", "clip.mp4"]) == 0
    out, err = capsys.readouterr()
    assert (out, err) == ("result of clip.mp4\n", "INFO dissect.fake: working on clip.mp4\n")
    assert not any(isinstance(h, StderrHandler) for h in logging.getLogger().handlers)
    monkeypatch.setenv(LEVEL_ENV, "loud")
    assert cli.main(["fake", "clip.mp4"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        "tsm fake: error: TSM_LOG_LEVEL='loud': expected one of DEBUG, INFO, WARNING, ERROR, "
        "CRITICAL (any case)\n"
    )


def test_the_project_is_tsm_and_the_packages_of_its_commands():
    assert cli.packages(cli.commands()) == ["detection", "dissect", "tsm_apps", "ui"]
    assert cli.packages({"fake": _Command}) == ["dissect", "tsm_apps"]


def test_a_bad_level_from_the_caller_names_it():
    with pytest.raises(ValueError, match=r"^log level 'verbose': expected one of DEBUG, INFO"):
        setup_logging("verbose")


def _prints(path: Path) -> list:
    """Lines that call or pass ``print`` (``report=print`` counts)."""
    tree = ast.parse(path.read_text(), str(path))
    return sorted(n.lineno for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id == "print")


def test_print_only_in_commands_and_report_writers():
    commands = {"tsm_apps/cli.py"}
    for ep in cli.commands().values():
        commands.add(ep.module.replace(".", "/") + ".py")
    assert len(commands) == 12, commands  # tsm and its eleven commands
    found = {
        p.relative_to(ROOT).as_posix(): _prints(p)
        for top in ("tsm_apps", "detection", "dissect", "ui")
        for p in sorted((ROOT / top).rglob("*.py"))
        if _prints(p)
    }
    library = {k: v for k, v in found.items() if k not in commands | REPORT_WRITERS}
    assert library == {}
    assert all(_prints(ROOT / m) == [] for m in CONVERTED)
