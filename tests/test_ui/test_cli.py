"""`tsm ui` argument handling and the Streamlit command it builds (nothing is started)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from ui import cli
from ui.app.settings import (
    ENV_ALLOW_ROOTS,
    ENV_FRAME_SIZE,
    ENV_ICE_SERVERS,
    ENV_MAX_CHECKPOINT_MB,
    ENV_MAX_DECODED_MP,
    ENV_MAX_FRAMES,
    ENV_MAX_UPLOAD_MB,
    ENV_ORIGINS,
    ENV_RUNS,
    ENV_SIGN_IN_HOURS,
    ENV_STREAM_HOSTS,
    ENV_TOKEN,
    UISettings,
    default_runs_dir,
)

TOKEN = "correct horse battery"


@pytest.fixture(autouse=True)
def no_token(monkeypatch):
    monkeypatch.delenv(ENV_TOKEN, raising=False)


def _command(*argv):
    cmd, env = cli.streamlit_command(cli.parse_args([*map(str, argv)]))
    return cmd, dict(zip(cmd[5::2], cmd[6::2])), env


def test_command_is_headless_on_localhost_with_runs_dir(tmp_path):
    cmd, opts, env = _command("--runs", tmp_path, "--port", "8123")
    assert cmd[:4] == [sys.executable, "-m", "streamlit", "run"]
    assert Path(cmd[4]) == Path(cli.__file__).parent / "server.py"  # ui/app/main.py, gated
    assert opts["--server.headless"] == "true"
    assert opts["--server.address"] == "127.0.0.1"
    assert opts["--server.port"] == "8123"
    assert opts["--server.enableAgentApi"] == "false"
    assert opts["--client.toolbarMode"] == "viewer"  # no "Clear cache", no "Deploy"
    # each uploader states its own limit; the server's cap is the larger one (checkpoints)
    assert opts["--server.maxUploadSize"] == "500"
    assert env[ENV_RUNS] == str(tmp_path.resolve())
    assert (env[ENV_MAX_UPLOAD_MB], env[ENV_MAX_CHECKPOINT_MB], env[ENV_MAX_FRAMES]) == (
        "50",
        "500",
        "300",
    )
    assert (env[ENV_FRAME_SIZE], env[ENV_MAX_DECODED_MP], env[ENV_ALLOW_ROOTS]) == (
        "360",
        "70.0",
        "",
    )
    assert ENV_TOKEN not in env


def test_repeatable_options_reach_the_server_whole(tmp_path):
    _, _, env = _command(
        "--runs",
        tmp_path,
        "--allow-stream-hosts",
        "10.0.0.0/8",
        "--allow-stream-hosts",
        "cam.local",
        "--ice-server",
        "stun:stun.example:3478",
        "--allow-origin",
        "HTTPS://App.Example",
        "--allow-origin",
        "http://127.0.0.1:9000/",
    )
    assert env[ENV_STREAM_HOSTS] == "10.0.0.0/8,cam.local"
    assert env[ENV_ICE_SERVERS] == "stun:stun.example:3478"
    assert env[ENV_ORIGINS] == "https://app.example,http://127.0.0.1:9000"
    assert _command("--runs", tmp_path)[2][ENV_ORIGINS] == ""


@pytest.mark.parametrize("origin", ["app.example", "https://app.example/ui", "ftp://h", "https://"])
def test_an_origin_that_is_not_scheme_host_port_is_refused(tmp_path, origin):
    with pytest.raises(ValueError, match=r"origin .*expected scheme://host\[:port\]"):
        _command("--runs", tmp_path, "--allow-origin", origin)


def test_the_sign_in_lasts_twelve_hours_unless_told(tmp_path):
    assert _command("--runs", tmp_path)[2][ENV_SIGN_IN_HOURS] == "12.0"
    assert _command("--runs", tmp_path, "--sign-in-hours", "0.5")[2][ENV_SIGN_IN_HOURS] == "0.5"
    with pytest.raises(ValueError, match="--sign-in-hours -1.0: expected a positive number"):
        _command("--runs", tmp_path, "--sign-in-hours", "-1")


def test_default_runs_dir_prefers_runs_demo(tmp_path):
    assert default_runs_dir(tmp_path) == tmp_path / "runs"
    (tmp_path / "runs" / "demo").mkdir(parents=True)
    assert default_runs_dir(tmp_path) == tmp_path / "runs" / "demo"


@pytest.mark.parametrize(
    "argv",
    [
        ["--port", "0"],
        ["--max-upload-mb", "0"],
        ["--max-frames", "-1"],
        ["--frame-size", "0"],
        ["--max-decoded-mp", "0"],
        ["--idle-minutes", "0"],
    ],
)
def test_bad_numbers_are_value_errors(argv):
    with pytest.raises(ValueError, match=argv[0]):
        cli.parse_args(argv)


def test_missing_runs_dir_is_reported(tmp_path):
    with pytest.raises(NotADirectoryError, match="not a folder"):
        cli.main(["--runs", str(tmp_path / "nope")])
    with pytest.raises(NotADirectoryError, match="--allow-root .*nope: not a folder"):
        cli.parse_args(["--allow-root", str(tmp_path / "nope")])


def test_tsm_ui_error_is_one_line(tmp_path, capsys):
    from tsm_apps.cli import main as tsm_main

    assert tsm_main(["ui", "--runs", str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tsm ui: error: --runs") and err.count("\n") == 1


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.20", "::", "example.org"])
def test_other_machines_need_a_token(tmp_path, capsys, host, monkeypatch):
    from tsm_apps.cli import main as tsm_main

    assert tsm_main(["ui", "--runs", str(tmp_path), "--host", host]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"tsm ui: error: --host {host} lets other machines reach the app: set an "
        f"access token ({ENV_TOKEN}=... or --token-file FILE) or use --host "
        "127.0.0.1\n"
    )
    monkeypatch.setenv(ENV_TOKEN, "short")
    with pytest.raises(ValueError, match="the access token has 5 characters; at least 12"):
        _command("--runs", tmp_path, "--host", host)
    monkeypatch.setenv(ENV_TOKEN, TOKEN)
    _, opts, env = _command("--runs", tmp_path, "--host", host)
    assert opts["--server.address"] == host and env[ENV_TOKEN] == TOKEN


def test_token_file_and_loopback_names(tmp_path):
    for host in ("127.0.0.1", "127.3.2.1", "::1", "localhost"):
        assert ENV_TOKEN not in _command("--runs", tmp_path, "--host", host)[2]
    (tmp_path / "token").write_text(TOKEN + "\nignored\n")
    env = _command("--runs", tmp_path, "--host", "0.0.0.0", "--token-file", tmp_path / "token")[2]
    assert env[ENV_TOKEN] == TOKEN
    with pytest.raises(FileNotFoundError, match="--token-file .*none: not found"):
        _command("--runs", tmp_path, "--token-file", tmp_path / "none")


def test_allowed_roots_are_passed_resolved(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    env = _command(
        "--runs",
        tmp_path,
        "--allow-root",
        tmp_path / "a" / ".." / "a",
        "--allow-root",
        tmp_path / "b",
    )[2]
    assert env[ENV_ALLOW_ROOTS].split(os.pathsep) == [str(tmp_path / "a"), str(tmp_path / "b")]


def test_settings_from_env(monkeypatch, tmp_path):
    monkeypatch.setenv(ENV_RUNS, str(tmp_path))
    monkeypatch.setenv(ENV_MAX_UPLOAD_MB, "2")
    monkeypatch.setenv(ENV_MAX_FRAMES, "7")
    monkeypatch.setenv(ENV_FRAME_SIZE, "120")
    monkeypatch.setenv(ENV_MAX_DECODED_MP, "0.5")
    monkeypatch.setenv(ENV_ALLOW_ROOTS, os.pathsep.join(["/a", "/b"]))
    s = UISettings.from_env()
    assert (s.runs_dir, s.max_upload_bytes, s.max_frames) == (tmp_path, 2 * 2**20, 7)
    assert (s.limits.max_frames, s.limits.short_side, s.limits.max_pixels) == (7, 120, 500_000)
    assert s.allow_roots == (Path("/a"), Path("/b")) and s.token is None
    monkeypatch.setenv(ENV_TOKEN, TOKEN)
    assert UISettings.from_env().token == TOKEN and TOKEN not in repr(UISettings.from_env())
    monkeypatch.setenv(ENV_MAX_UPLOAD_MB, "lots")
    with pytest.raises(ValueError, match="TSM_UI_MAX_UPLOAD_MB must be a number"):
        UISettings.from_env()
    monkeypatch.setenv(ENV_MAX_UPLOAD_MB, "0.5")
    with pytest.raises(ValueError, match="TSM_UI_MAX_UPLOAD_MB must be a whole number > 0"):
        UISettings.from_env()
