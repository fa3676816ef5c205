"""Each session's temporary folder: removed when the session ends (the runtime no longer has it,
or its state is dropped), when it is left idle, or on demand; made again on the next use."""

from __future__ import annotations

import gc
import os
import time

from ui.app.session import EndedSessions, SessionFolder, sweep


def test_removed_when_the_session_state_is_dropped(tmp_path):
    state = {"folder": SessionFolder(tmp_path)}  # what st.session_state holds
    path = state["folder"].use()
    (path / "upload.pth").write_bytes(b"x")
    assert path.parent == tmp_path and path.name == f"session_{state['folder'].owner}"
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
    idle, busy = SessionFolder(tmp_path, "a1"), SessionFolder(tmp_path, "b2")
    (idle.use() / "a.pth").write_bytes(b"a")
    busy.use()
    old = time.time() - 3600
    os.utime(idle.path, (old, old))
    (tmp_path / "not_a_session").mkdir()
    assert sweep(tmp_path, idle_s=1800) == [tmp_path / "session_a1"]
    assert not idle.path.exists() and busy.path.exists() and (tmp_path / "not_a_session").exists()
    assert sweep(tmp_path, idle_s=1800, now=time.time() + 7200) == [busy.path]
    again = idle.use()  # the session comes back: an empty folder again
    assert again == idle.path and again.is_dir() and list(again.iterdir()) == []


def test_folders_of_ended_sessions_swept(tmp_path):
    live, gone = SessionFolder(tmp_path, "live"), SessionFolder(tmp_path, "gone")
    asked = []

    def ended(owner: str) -> bool:
        asked.append(owner)
        return owner == "gone"

    assert sweep(tmp_path, idle_s=1800, ended=ended) == [gone.path]
    assert sorted(asked) == ["gone", "live"] and live.path.exists() and not gone.path.exists()


def test_a_session_ends_after_the_runtime_let_it_go(monkeypatch):
    """Gone from the runtime's active sessions for longer than its reconnect window."""
    from streamlit import config
    from streamlit.runtime import Runtime

    active = {"s1"}
    clock = [1000.0]

    class FakeRuntime:
        def is_active_session(self, sid):
            return sid in active

    monkeypatch.setattr(Runtime, "exists", classmethod(lambda cls: True))
    monkeypatch.setattr(Runtime, "instance", classmethod(lambda cls: FakeRuntime()))
    monkeypatch.setattr(config, "get_option", lambda name: 5)
    monkeypatch.setattr(time, "monotonic", lambda: clock[0])
    ended = EndedSessions()
    assert not ended("s1") and not ended("s2")  # s2 just went away: it may reconnect
    clock[0] += 4
    assert not ended("s2")
    clock[0] += 2
    assert ended("s2") and not ended("s1")
    active.discard("s1")
    assert not ended("s1")
    active.add("s1")  # reconnected within the window: the clock starts again next time
    clock[0] += 10
    assert not ended("s1")
