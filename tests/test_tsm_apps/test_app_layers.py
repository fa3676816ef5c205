"""The Streamlit app's import structure (``ui/app``), read from the sources by the import-graph
reader of ``test_import_graph.py``: the app is at most 7 layers deep, no page
(``ui/app/views/<name>.py``) imports another page, and no ``pages/`` folder lies beside the app
script."""

import os
from pathlib import Path

import pytest

from tests.test_tsm_apps.test_import_graph import ROOT, graph, modules, targets_of

APP = "ui.app"
APP_MAX_LAYERS = 7


def room(module: str) -> str:
    """The app's part that ``module`` belongs to: a module directly under ``ui/app``, a page or
    a widget (``ui/app/views/<name>.py``, ``ui/app/widgets/<name>.py``: each its own room), or
    the data sub-package (``ui/app/sources/``) as a whole."""
    parts = module.split(".")
    return ".".join(
        parts[:4] if parts[:3] in (["ui", "app", "views"], ["ui", "app", "widgets"]) else parts[:3]
    )


def app_edges() -> dict:
    """The import graph between the rooms of the Streamlit app (see :func:`room`)."""
    edges: dict = {}
    for m, targets in graph().items():
        if m.startswith(APP + "."):
            edges.setdefault(room(m), set()).update(
                room(t) for t in targets if t.startswith(APP + ".") and room(t) != room(m)
            )
    return edges


def longest_chain(edges: dict) -> list:
    """The longest import chain of an acyclic graph, importer first (its length is the number
    of layers); ValueError naming the module when the graph has a circle."""
    memo: dict = {}

    def chain(m):
        if m in memo:
            if memo[m] is None:
                raise ValueError(f"import circle through {m}")
            return memo[m]
        memo[m] = None
        below = [chain(t) for t in sorted(edges.get(m, ())) if t in edges]
        memo[m] = [m] + max(below, key=len, default=[])
        return memo[m]

    return max((chain(m) for m in sorted(edges)), key=len, default=[])


def is_page(module: str) -> bool:
    """A page of the app: a module ``ui/app/views/<name>.py``."""
    return module.startswith(APP + ".views.") and module.count(".") == 3


def test_the_chain_finder_counts_layers():
    edges = {"a": {"b", "d"}, "b": {"c"}, "c": set(), "d": {"c", "x"}, "e": {"d"}}
    assert longest_chain(edges) == ["a", "b", "c"]  # x is outside the graph
    assert longest_chain({"a": set()}) == ["a"]
    with pytest.raises(ValueError, match="circle"):
        longest_chain({"a": {"b"}, "b": {"a"}})


def test_pages_are_the_page_modules_of_the_app_and_sources_is_one_room():
    assert is_page("ui.app.views.runs") and not is_page("ui.app.views")
    assert not is_page("ui.app.widgets.player") and not is_page("ui.app.sources.runs_folder")
    assert not is_page("ui.pipeline.views.x")
    assert room("ui.app.sources.flow") == room("ui.app.sources") == "ui.app.sources"
    assert room("ui.app.views.runs") == "ui.app.views.runs"
    assert room("ui.app.widgets.player") == "ui.app.widgets.player"
    assert room("ui.app.settings") == "ui.app.settings"


def test_the_app_is_at_most_seven_layers_deep():
    chain = longest_chain(app_edges())
    assert len(chain) <= APP_MAX_LAYERS, " -> ".join(chain)


def test_no_page_imports_a_page():
    known = modules()
    bad = [
        f"{known[m].relative_to(ROOT)}:{line} imports {t}"
        for m in sorted(known)
        if is_page(m)
        for line, t in targets_of(m, known[m], known)
        if is_page(t)
    ]
    assert bad == []


def test_no_folder_beside_the_app_script_that_streamlit_would_list_as_pages():
    """Streamlit lists every script in a ``pages/`` folder beside the main script as a page of
    its own (an extra sidebar menu whose entries run the view modules as scripts)."""
    import ui.app.main

    assert not (Path(ui.app.main.__file__).parent / "pages").exists()


def pipeline_imports_of_the_app(known: dict) -> list:
    """``"file:line imports module"`` for every import of the demo pipeline (``ui.pipeline``)
    by a module of the app (``ui.app``): the app reads the runs folder through ``ui.runs``."""
    return [
        f"{os.path.relpath(known[m], ROOT)}:{line} imports {t}"
        for m in sorted(known)
        if m.startswith(APP + ".")
        for line, t in targets_of(m, known[m], known)
        if t == "ui.pipeline" or t.startswith("ui.pipeline.")
    ]


def test_the_app_never_imports_the_demo_pipeline(tmp_path):
    assert pipeline_imports_of_the_app(modules()) == []
    # the guard can fail: an app module that imports the pipeline is named with its line
    page = tmp_path / "ui" / "app" / "views" / "x.py"
    page.parent.mkdir(parents=True)
    page.write_text("import os\nfrom ui.pipeline.demo import main\n")
    known = {**modules(), "ui.app.views.x": page}
    found = pipeline_imports_of_the_app(known)
    assert len(found) == 1 and found[0].endswith("x.py:2 imports ui.pipeline.demo")
