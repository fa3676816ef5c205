"""Each session's temporary folder: removed when the session ends (its state is dropped), when
it is left idle, or on demand; made again on the next use."""
from __future__ import annotations

import gc
import os
import time

from ui.app.session import SessionFolder, sweep_idle


def test_removed_when_the_session_state_is_dropped(tmp_path):
    state = {"folder": SessionFolder(tmp_path)}  # what st.session_state holds
    path = state["folder"].use()
    (path / "upload.pth").write_bytes(b"x")
    assert path.parent == tmp_path and path.name.startswith("session_")
    assert oct(path.stat().st_mode & 0o777) == "0o700"
    state.clear()  # Streamlit drops a session's state when the session ends
    gc.collect()
    assert not path.exists() and list(tmp_path.iterdir()) == []


def test_context_manager_and_remove_always_clean_up(tmp_path):
    try:
        with SessionFolder(tmp_path) as f:
            (f.use() / "a").write_text("a")
            raise RuntimeError
    except RuntimeError:
        pass
    assert list(tmp_path.iterdir()) == []
    f = SessionFolder(tmp_path)
    f.remove()
    f.remove()  # idempotent
    assert list(tmp_path.iterdir()) == []


def test_idle_folders_swept_used_ones_kept_and_made_again(tmp_path):
    idle, busy = SessionFolder(tmp_path), SessionFolder(tmp_path)
    (idle.use() / "a.pth").write_bytes(b"a")
    busy.use()
    old = time.time() - 3600
    os.utime(idle.path, (old, old))
    (tmp_path / "not_a_session").mkdir()
    assert sweep_idle(tmp_path, idle_s=1800) == [idle.path]
    assert not idle.path.exists() and busy.path.exists() and (tmp_path / "not_a_session").exists()
    assert sweep_idle(tmp_path, idle_s=1800, now=time.time() + 7200) == [busy.path]
    again = idle.use()  # the session comes back: an empty folder again
    assert again == idle.path and again.is_dir() and list(again.iterdir()) == []
