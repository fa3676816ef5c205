"""Who may use the app (the token, asked before any page) and which files typed paths may name."""
from __future__ import annotations

import os

import pytest

from ui.app.access import PathRefused, confine, is_loopback, token_matches
from ui.app.settings import ENV_TOKEN

TOKEN = "correct horse battery"


@pytest.mark.parametrize("host, loop", [("127.0.0.1", True), ("127.9.9.9", True), ("::1", True),
                                        ("[::1]", True), ("localhost", True),
                                        ("0.0.0.0", False), ("::", False), ("10.0.0.5", False),
                                        ("myhost.example", False), ("", False)])
def test_loopback(host, loop):
    assert is_loopback(host) is loop


def test_token_compare():
    assert token_matches(TOKEN, TOKEN)
    assert not token_matches(TOKEN[:-1], TOKEN) and not token_matches(TOKEN + " ", TOKEN)
    assert not token_matches("", TOKEN) and token_matches("é" * 12, "é" * 12)


def test_typed_paths_confined_to_allowed_roots(tmp_path):
    runs, extra, outside = tmp_path / "runs", tmp_path / "models", tmp_path / "secret"
    for d in (runs / "train", extra, outside):
        d.mkdir(parents=True)
    (outside / "model.pth").write_bytes(b"x")
    roots = [runs, extra]
    assert confine(str(runs / "train" / "best.pth"), roots) == runs / "train" / "best.pth"
    assert confine(f"  {extra}  ", roots) == extra
    for typed in (str(outside / "model.pth"), str(runs / ".." / "secret" / "model.pth"),
                  "/etc/passwd", str(tmp_path)):
        with pytest.raises(PathRefused) as e:
            confine(typed, roots)
        assert str(e.value) == (f"{typed}: outside the folders this app may read (the runs "
                                "folder, uploads, and folders allowed with `tsm ui --allow-root "
                                "DIR`)")
    os.symlink(outside, runs / "link")  # a link inside the runs folder pointing out of it
    with pytest.raises(PathRefused):
        confine(str(runs / "link" / "model.pth"), roots)


@pytest.fixture
def runs(tmp_path):
    (tmp_path / "runs").mkdir()
    return tmp_path / "runs"


def test_token_asked_before_any_page(app_for, runs):
    at = app_for(runs, **{ENV_TOKEN: TOKEN}).run()
    assert not at.exception
    assert [t.label for t in at.text_input] == ["Access token"]
    assert len(at.sidebar) == 0 and not at.header and not at.radio  # no view, no sidebar
    at.text_input(key="_access_token").input("wrong token!!")  # a form: sent with its button
    at.button[0].click().run()
    assert [e.value for e in at.error] == ["Wrong access token."]
    assert not at.header and len(at.sidebar) == 0
    at.text_input(key="_access_token").input(TOKEN)
    at.button[0].click().run()
    assert not at.exception and not at.error
    assert at.header[0].value == "Detection: TSN vs online TSM"
    assert at.sidebar.radio(key="view").value == "Detection"
    at.sidebar.radio(key="view").set_value("Runs").run()  # later reruns need no token again
    assert at.header[0].value == "Runs" and not at.text_input


def test_no_token_no_question(app_for, runs):
    at = app_for(runs).run()
    assert not at.exception and at.header[0].value == "Detection: TSN vs online TSM"
