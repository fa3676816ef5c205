"""Pages of other packages: a ``render(settings)`` registered under the ``tsm.views``
entry-point group is listed after the app's own pages and draws its page (AppTest)."""

from __future__ import annotations

from importlib.metadata import EntryPoint

import streamlit as st

import ui.app.views
from ui.app.views import GROUP


def hello_page(settings) -> None:
    """A page of another package: the runs folder's name."""
    st.header("Hello")
    st.write(f"runs: {settings.runs_dir.name}")


def installed(monkeypatch, **pages: str) -> None:
    eps = [EntryPoint(name, value, GROUP) for name, value in pages.items()]
    monkeypatch.setattr(ui.app.views, "entry_points", lambda group: eps if group == GROUP else [])


def test_an_installed_page_is_listed_and_drawn(app_for, empty_runs, monkeypatch):
    installed(monkeypatch, Hello=f"{__name__}:hello_page", Runs=f"{__name__}:hello_page")
    at = app_for(empty_runs).run()
    # the app's own pages first; an installed page cannot take one of their names
    assert at.sidebar.radio(key="view").options == [
        "Detection",
        "Attention",
        "Live",
        "Runs",
        "Hello",
    ]
    at.sidebar.radio(key="view").set_value("Hello").run()
    assert not at.exception and not at.error
    assert [h.value for h in at.header] == ["Hello"]
    assert at.markdown[-1].value == "runs: runs"


def test_a_page_that_cannot_load_is_one_line_and_the_app_stays(app_for, empty_runs, monkeypatch):
    installed(monkeypatch, Broken="no_such_package.pages:render")
    at = app_for(empty_runs).run()
    at.sidebar.radio(key="view").set_value("Broken").run()
    assert not at.exception
    assert [e.value for e in at.error] == [
        "page Broken (no_such_package.pages:render) could not be loaded: "
        "ModuleNotFoundError: No module named 'no_such_package'"
    ]
    at.sidebar.radio(key="view").set_value("Runs").run()
    assert not at.exception and not at.error
