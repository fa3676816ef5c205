"""`tsm ui` argument handling and the Streamlit command it builds (nothing is started)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ui import cli
from ui.app.settings import ENV_MAX_FRAMES, ENV_MAX_UPLOAD_MB, ENV_RUNS, UISettings, default_runs_dir


def test_command_is_headless_on_localhost_with_runs_dir(tmp_path):
    cmd, env = cli.streamlit_command(cli.parse_args(["--runs", str(tmp_path), "--port", "8123"]))
    assert cmd[:4] == [sys.executable, "-m", "streamlit", "run"]
    assert Path(cmd[4]) == Path(cli.__file__).parent / "app" / "main.py"
    opts = dict(zip(cmd[5::2], cmd[6::2]))
    assert opts["--server.headless"] == "true"
    assert opts["--server.address"] == "127.0.0.1"
    assert opts["--server.port"] == "8123"
    assert opts["--server.maxUploadSize"] == "51"  # our 50 MB limit + 1 (our message wins)
    assert env[ENV_RUNS] == str(tmp_path.resolve())
    assert env[ENV_MAX_UPLOAD_MB] == "50.0" and env[ENV_MAX_FRAMES] == "300"


def test_default_runs_dir_prefers_runs_demo(tmp_path):
    assert default_runs_dir(tmp_path) == tmp_path / "runs"
    (tmp_path / "runs" / "demo").mkdir(parents=True)
    assert default_runs_dir(tmp_path) == tmp_path / "runs" / "demo"


@pytest.mark.parametrize("argv", [["--port", "0"], ["--max-upload-mb", "0"],
                                  ["--max-frames", "-1"]])
def test_bad_numbers_are_value_errors(argv):
    with pytest.raises(ValueError):
        cli.parse_args(argv)


def test_missing_runs_dir_is_reported(tmp_path):
    with pytest.raises(NotADirectoryError, match="not a folder"):
        cli.main(["--runs", str(tmp_path / "nope")])


def test_tsm_ui_error_is_one_line(tmp_path, capsys):
    from tsm_apps.cli import main as tsm_main
    assert tsm_main(["ui", "--runs", str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tsm ui: error: --runs") and "Traceback" not in err


def test_settings_from_env(monkeypatch, tmp_path):
    monkeypatch.setenv(ENV_RUNS, str(tmp_path))
    monkeypatch.setenv(ENV_MAX_UPLOAD_MB, "0.5")
    monkeypatch.setenv(ENV_MAX_FRAMES, "7")
    s = UISettings.from_env()
    assert (s.runs_dir, s.max_upload_bytes, s.max_frames) == (tmp_path, 524288, 7)
    monkeypatch.setenv(ENV_MAX_UPLOAD_MB, "lots")
    with pytest.raises(ValueError, match="TSM_UI_MAX_UPLOAD_MB must be a number"):
        UISettings.from_env()
