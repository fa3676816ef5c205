"""The demo's resumable pipeline: skip by outputs, side-by-side stages, clear failures."""
import sys

import pytest

from ui.pipeline.steps import Step, StepFailed, run_steps

WRITE = "import sys, pathlib; print('hello\\rprogress'); pathlib.Path(sys.argv[1]).write_text(sys.argv[2])"


def step(name, out, text="x", code=WRITE):
    return Step(name, [str(out), text], [out], program=[sys.executable, "-c", code])


def test_runs_then_reuses_by_outputs(tmp_path, capsys):
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    timing = run_steps([step("one", a), [step("two", b, "2"), step("three", c, "3")]],
                       log_dir=tmp_path / "logs")
    assert a.read_text() == "x" and b.read_text() == "2" and c.read_text() == "3"
    assert all(isinstance(v, float) for v in timing.values())
    out = capsys.readouterr().out
    assert "[two] hello" in out and "[demo 3/3] three" in out
    assert (tmp_path / "logs" / "two.log").read_text().splitlines()[:2] == ["hello", "progress"]
    b.unlink()
    timing = run_steps([step("one", a), [step("two", b, "again"), step("three", c)]],
                       log_dir=tmp_path / "logs")
    assert timing == {"one": "reused", "two": timing["two"], "three": "reused"}
    assert b.read_text() == "again" and c.read_text() == "3"


def test_failure_names_step_and_missing_outputs(tmp_path):
    bad = Step("bad", [], [tmp_path / "never"], program=[sys.executable, "-c", "raise SystemExit(3)"])
    with pytest.raises(StepFailed, match=r"step 'bad' failed \(exit 3; missing outputs .*never"):
        run_steps([bad], log_dir=tmp_path)
    ok = step("ok", tmp_path / "ok")
    with pytest.raises(StepFailed, match=r"'bad'.*log: .*bad.log"):
        run_steps([[ok, bad]], log_dir=tmp_path)
