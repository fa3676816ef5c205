"""Attention view on real dissection runs of tiny random-weight TSN and TSM models (AppTest)."""

from __future__ import annotations

import json

import pytest

from ui_fixtures import (
    captions,
    image_captions,
    image_urls,
    shown_cells,
    write_dissection_runs,
    write_temporal_data,
)


@pytest.fixture(scope="module")
def dissect_runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("attention")
    data = write_temporal_data(root / "data")
    write_dissection_runs(root / "runs", data)
    return root / "runs"


def test_attention_view_panels_slider_and_curves(app_for, dissect_runs):
    from dissect.layout import load_run

    at = app_for(dissect_runs).run()
    at.sidebar.radio(key="view").set_value("Attention").run()
    assert not at.exception and not at.error
    clip_box = at.selectbox(key="att_clip")
    runs = {m: load_run(dissect_runs / "dissect" / m.lower()) for m in ("TSN", "TSM")}
    assert list(clip_box.options) == sorted(runs["TSM"].clips)
    assert at.header[0].value == "Attention maps"
    assert at.subheader[0].value == "Where TSN and TSM look: the clips of their dissection runs"
    caps = image_captions(at)
    assert [c.split(":")[0] for c in caps] == ["TSN frame 0/3", "TSM frame 0/3"]
    urls0 = image_urls(at)
    assert len(urls0) == 2 and urls0[0] != urls0[1] and len(at.get("image")) == 1

    # the mass curves are the per-frame masses the dissection stored for this clip
    cid = clip_box.value
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    curves = {t["name"]: t["y"] for t in spec["data"]}
    for m in ("TSN", "TSM"):
        assert curves[m] == pytest.approx(runs[m].clips[cid].record["scores"]["method"]["mass"])
    table = at.dataframe[0].value
    assert list(table.index) == ["TSN", "TSM"]
    assert "pointing game (all frames with a box)" in table.columns  # words, not metric keys

    at.slider(key="att").set_value(2).run()
    assert not at.exception
    assert [c.split(":")[0] for c in image_captions(at)] == ["TSN frame 2/3", "TSM frame 2/3"]
    urls2 = image_urls(at)
    assert len(urls2) == 2 and set(urls2).isdisjoint(urls0)
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert spec["layout"]["shapes"][0]["x0"] == 2  # the curves mark the frame shown


def test_player_plays_without_blocking_the_page(app_for, dissect_runs):
    """Play starts a timed fragment that shows one frame further per run; the page's other
    widgets keep working meanwhile; Pause stops at the frame shown; the end stops by itself."""
    at = app_for(dissect_runs).run()
    at.sidebar.radio(key="view").set_value("Attention").run()
    at.button(key="att__play").click().run()  # the first frame further is shown at once
    assert not at.exception and at.session_state["att__playing"]
    assert at.session_state["att"] == 1
    assert at.slider(key="att").disabled and at.button(key="att__pause")
    at.radio(key="att_per").set_value("frame").run()  # the page answers while it plays
    assert not at.exception and at.session_state["att__playing"]
    assert at.session_state["att"] == 2
    at.button(key="att__pause").click().run()
    assert not at.session_state["att__playing"] and not at.slider(key="att").disabled
    assert image_captions(at)[0].startswith("TSN frame 2/3")
    at.run()
    assert at.session_state["att"] == 2  # paused: no frame moves
    at.button(key="att__play").click().run()  # plays the last frame, then stops by itself
    assert at.session_state["att"] == 3 and not at.session_state["att__playing"]
    assert image_captions(at)[1].startswith("TSM frame 3/3") and not at.exception
    at.button(key="att__play").click().run()  # from the end: plays again from the start
    assert at.session_state["att"] == 1 and at.session_state["att__playing"]


def test_attention_view_other_clip_and_scale(app_for, dissect_runs):
    at = app_for(dissect_runs).run()
    at.sidebar.radio(key="view").set_value("Attention").run()
    before = image_urls(at)
    box = at.selectbox(key="att_clip")
    box.set_value(box.options[1]).run()
    assert not at.exception and image_urls(at) != before
    at.radio(key="att_per").set_value("frame").run()
    assert not at.exception and not at.error


def test_runs_view_shows_dissection_comparison(app_for, dissect_runs):
    """Scores in [0, 1] in one table (3 decimals, a dash where a run has none); the mass ratio
    and the counts beside it, not in it; each bar series in its own colour."""
    from dissect.layout import load_run
    from ui import models

    at = app_for(dissect_runs).run()
    at.sidebar.radio(key="view").set_value("Runs").run()
    assert not at.exception and not at.error
    element = next(t for t in at.dataframe if "top-1 accuracy" in t.value.columns)
    table = element.value
    assert list(table.index) == ["TSN", "TSM", "centre prior", "random map"]
    # headers in words (dissect.report's names of the scores), never the metric keys
    assert list(table.columns) == [
        "top-1 accuracy",
        "pointing game (all frames with a box)",
        "pointing game (frames where the action happens)",
        "pointing game, standard tolerance (15 px at 224)",
        "IoU, dataset threshold (20% of pixels kept)",
        "IoU, 20%-of-max threshold",
    ]
    assert list(table["top-1 accuracy"])[2:] == ["–", "–"]  # the grid's own cells: no None
    shown = shown_cells(element).rename(
        columns=dict(
            zip(
                table.columns,
                [
                    "accuracy",
                    "pointing",
                    "pointing_active",
                    "pointing_tol",
                    "iou_dataset",
                    "iou_max20",
                ],
            )
        )
    )
    cells = shown.to_numpy().ravel().tolist()
    assert all(c == "–" or (len(c) == 5 and c[1] == ".") for c in cells), cells
    assert list(shown["accuracy"])[2:] == ["–", "–"]  # the baselines have no accuracy
    tsm = load_run(dissect_runs / "dissect" / "tsm").metrics
    assert shown.loc["TSM", "pointing"] == f"{tsm['aggregate']['method']['pointing']:.3f}"
    clips = tsm["aggregate"]["method"]["clips"]
    assert (
        f"clips scored: TSN {clips}, TSM {clips}, centre prior {clips}, random map {clips}"
        in captions(at)
    )
    assert any(
        c.startswith("mass ratio (attention in acting / still frames): TSN ") for c in captions(at)
    )
    spec = next(
        json.loads(c.proto.spec)
        for c in at.get("plotly_chart")
        if "where the maps look" in json.dumps(json.loads(c.proto.spec)["layout"])
    )
    colours = {t["name"]: t["marker"]["color"] for t in spec["data"]}
    assert colours == {
        "TSN": models.css("TSN"),
        "TSM": models.css("TSM"),
        "centre prior": models.css("centre prior"),
        "random map": models.css("random map"),
    }
    assert len(set(colours.values())) == 4
