"""With nothing trained, every view explains how to make results (`make demo`)."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("view", ["Detection", "Attention", "Runs"])
def test_empty_runs_shows_make_demo_hint(app_for, empty_runs, view):
    at = app_for(empty_runs).run()
    assert not at.exception
    at.sidebar.radio(key="view").set_value(view).run()
    assert not at.exception
    hints = [i.value for i in at.info if "make demo" in i.value]
    assert len(hints) == 1 and str(empty_runs) in hints[0]
    assert not at.error


def test_missing_runs_folder_is_flagged(app_for, tmp_path):
    at = app_for(tmp_path / "absent").run()
    assert not at.exception
    assert any("does not exist" in w.value for w in at.sidebar.warning)
