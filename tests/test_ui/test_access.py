"""Who may use the app (the page draws nothing without the server's credential), which files
typed paths may name, and that error lines name uploads as the user named them."""

from __future__ import annotations

import os

import pytest

from ui.app.access import NOT_SIGNED_IN, PathRefused, confine, is_loopback
from ui.app.settings import ENV_TOKEN

TOKEN = "correct horse battery"


@pytest.mark.parametrize(
    "host, loop",
    [
        ("127.0.0.1", True),
        ("127.9.9.9", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("::", False),
        ("10.0.0.5", False),
        ("myhost.example", False),
        ("", False),
    ],
)
def test_loopback(host, loop):
    assert is_loopback(host) is loop


def test_typed_paths_confined_to_allowed_roots(tmp_path):
    runs, extra, outside = tmp_path / "runs", tmp_path / "models", tmp_path / "secret"
    for d in (runs / "train", extra, outside):
        d.mkdir(parents=True)
    (outside / "model.pth").write_bytes(b"x")
    roots = [runs, extra]
    assert confine(str(runs / "train" / "best.pth"), roots) == runs / "train" / "best.pth"
    assert confine(f"  {extra}  ", roots) == extra
    for typed in (
        str(outside / "model.pth"),
        str(runs / ".." / "secret" / "model.pth"),
        "/etc/passwd",
        str(tmp_path),
    ):
        with pytest.raises(PathRefused) as e:
            confine(typed, roots)
        assert str(e.value) == (
            f"{typed}: outside the folders this app may read (the runs "
            "folder, this session's uploads, and folders allowed with `tsm ui --allow-root "
            "DIR`)"
        )
    os.symlink(outside, runs / "link")  # a link inside the runs folder pointing out of it
    with pytest.raises(PathRefused):
        confine(str(runs / "link" / "model.pth"), roots)


@pytest.fixture
def runs(tmp_path):
    (tmp_path / "runs").mkdir()
    return tmp_path / "runs"


def test_page_draws_nothing_without_the_credential(app_for, runs):
    """Behind ``tsm ui`` the server's gate answers before the page (tests/test_ui/test_server.py);
    the page checks the credential again: without it (here: no server, no cookie) one line."""
    at = app_for(runs, **{ENV_TOKEN: TOKEN}).run()
    assert not at.exception
    assert [t.value for t in at.title] == ["TSM vs TSN"]
    assert [w.value for w in at.warning] == [NOT_SIGNED_IN]
    assert len(at.sidebar) == 0 and not at.header and not at.radio and not at.text_input


def test_an_uploaded_checkpoint_is_named_as_given(tmp_path):
    """A checkpoint upload that is not a recognizer: the loader's error line, as the views show
    it (ui.app.sources.uploads.as_given), names the file as the user gave it, never the server's folder
    of the session's uploads."""
    from ui.app import sources
    from ui.app.sources import uploads as upload

    folder = tmp_path / "tsm_ui_uploads_x" / "session_0123abcd"
    kept = upload.keep_checkpoint("my weights (v2).pth", os.urandom(3000), 2**20, folder)
    assert kept.parent.parent == folder and kept.name == "my_weights_(v2).pth"
    with pytest.raises(ValueError) as e:
        sources.load_recognizer(kept)
    assert str(kept) in str(e.value)  # the loader names the file it read...
    line = upload.as_given(str(e.value))  # ...the page names the upload
    assert line.startswith(
        "cannot use my_weights_(v2).pth as a recognizer: `my weights (v2).pth`"
    ), line
    assert str(tmp_path) not in line and "session_" not in line and "\n" not in line


def test_no_token_no_question(app_for, runs):
    at = app_for(runs).run()
    assert not at.exception and at.header[0].value == "Detection: TSN vs online TSM"
