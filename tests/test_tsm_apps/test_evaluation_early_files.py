"""early.csv / early.json / early.html of ``tsm test --online``: written, read back, drawn."""

import json

import pytest

from tsm_apps.evaluation.early_files import (
    EARLY_CSV,
    early_figure,
    read_early_csv,
    whole_video_top1,
    write_early,
)

# results.md §9's measured early-recognition table (60 val videos)
RES = {
    "fractions": [0.1, 0.5, 1.0],
    "videos": 60,
    "top1": {
        "tsn": [10.0, 15.0, 23.3333],
        "tsm_offline": [11.6667, 16.6667, 35.0],
        "tsm_online": [15.0, 26.6667, 26.6667],
    },
}


def test_written_csv_reads_back_and_names_are_defined_once(tmp_path):
    path = write_early(RES, tmp_path)
    assert path == tmp_path / EARLY_CSV
    assert path.read_text().splitlines() == [
        "fraction,tsn,tsm_offline,tsm_online",
        "0.1,10.0000,11.6667,15.0000",
        "0.5,15.0000,16.6667,26.6667",
        "1.0,23.3333,35.0000,26.6667",
    ]
    back = read_early_csv(path)
    assert back == {"fractions": RES["fractions"], "top1": RES["top1"]}
    assert json.loads((tmp_path / "early.json").read_text())["videos"] == 60
    assert "plotly" in (tmp_path / "early.html").read_text().lower()


def test_figure_lines_per_method_and_whole_video_bars():
    assert whole_video_top1(RES) == {"tsm_online": 26.6667, "tsm_offline": 35.0}
    data = early_figure(RES).to_dict()["data"]
    lines = {t["name"]: t for t in data if t["type"] == "scatter"}
    assert list(lines) == ["TSN", "offline TSM", "online TSM"]
    assert list(lines["online TSM"]["x"]) == [10.0, 50.0, 100.0]
    assert list(lines["offline TSM"]["y"]) == [11.6667, 16.6667, 35.0]
    bars = [t for t in data if t["type"] == "bar"]
    assert len(bars) == 1 and list(bars[0]["x"]) == ["online TSM", "offline TSM"]
    assert list(bars[0]["y"]) == [26.6667, 35.0] and bars[0]["xaxis"] == "x2"
    short = dict(RES, fractions=[0.1, 0.5, 0.9])  # never the whole video: no bars
    assert whole_video_top1(short) == {} and all(
        t["type"] == "scatter" for t in early_figure(short).to_dict()["data"]
    )


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "early.csv:1: expected the header fraction,<method>"),
        ("step,tsn\n0.1,10\n", "early.csv:1: expected the header"),
        ("fraction,tsn\n0.1,10\n0.2,oops\n", "early.csv:3: column 'tsn' holds 'oops'"),
        ("fraction,tsn,tsm_online\n0.1,10\n", "early.csv:2: 2 cells, expected 3"),
        ("fraction,tsn\n", "early.csv: no rows"),
    ],
)
def test_bad_csv_is_named_by_line(tmp_path, text, message):
    (tmp_path / "early.csv").write_text(text)
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        read_early_csv(tmp_path / "early.csv")
