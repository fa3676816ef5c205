"""The demo's resumable pipeline: skip by outputs, steps side by side after their needs, wall
and CPU seconds per step, clear failures."""

import sys

import pytest

from ui.pipeline.steps import Step, StepFailed, run_steps

WRITE = "import sys, pathlib; print('hello\\rprogress'); pathlib.Path(sys.argv[1]).write_text(sys.argv[2])"
# appends its name to a shared file when it starts and when it ends (order of events); it ends
# after ``secs`` seconds, or (``secs`` a word) once that word is in the file (at most 60 s)
TRACE = (
    "import sys, time, pathlib; t = pathlib.Path(sys.argv[1]); w = lambda s: t.open('a').write(s)"
    "; w(sys.argv[2] + '+ '); a = sys.argv[3]; end = time.time() + 60\n"
    "if a.replace('.', '').isdigit(): time.sleep(float(a))\n"
    "else:\n while a not in t.read_text().split() and time.time() < end: time.sleep(0.05)\n"
    "w(sys.argv[2] + '- '); pathlib.Path(sys.argv[4]).write_text('x')"
)


def step(name, out, text="x", code=WRITE, needs=()):
    return Step(name, [str(out), text], [out], program=[sys.executable, "-c", code], needs=needs)


def traced(name, trace, out, secs=0.3, needs=()):
    return Step(
        name, [trace, name, secs, out], [out], program=[sys.executable, "-c", TRACE], needs=needs
    )


def test_runs_then_reuses_by_outputs(tmp_path, capsys):
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    timing = run_steps(
        [step("one", a), [step("two", b, "2"), step("three", c, "3")]], log_dir=tmp_path / "logs"
    )
    assert a.read_text() == "x" and b.read_text() == "2" and c.read_text() == "3"
    assert all(v["seconds"] > 0 and v["cpu_seconds"] > 0 for v in timing.values())
    out = capsys.readouterr().out
    assert "[two] hello" in out and "[demo 3/3] three" in out
    assert (tmp_path / "logs" / "two.log").read_text().splitlines()[:2] == ["hello", "progress"]
    b.unlink()
    timing = run_steps(
        [step("one", a), [step("two", b, "again"), step("three", c)]], log_dir=tmp_path / "logs"
    )
    assert timing == {"one": "reused", "two": timing["two"], "three": "reused"}
    assert b.read_text() == "again" and c.read_text() == "3"


def test_needs_and_workers_order_the_steps(tmp_path):
    trace = tmp_path / "trace"
    steps = [
        traced("a", trace, tmp_path / "a", secs="c+"),  # ends once c has started
        traced("b", trace, tmp_path / "b", needs=["a"]),
        traced("c", trace, tmp_path / "c", secs="b-"),
    ]  # ends once b has ended
    run_steps(steps, log_dir=tmp_path / "logs", workers=2)
    # a and c start together; b (first in priority after a) waits for a, then runs beside c
    events = trace.read_text().split()
    assert sorted(events[:2]) == ["a+", "c+"] and events[2:] == ["a-", "b+", "b-", "c-"]
    trace.unlink()
    run_steps(
        [traced(n, trace, tmp_path / f"{n}1", secs=0.1) for n in "xyz"],
        log_dir=tmp_path / "logs",
        workers=1,
    )
    assert trace.read_text().split() == ["x+", "x-", "y+", "y-", "z+", "z-"]


def test_cpu_seconds_count_work_not_waiting(tmp_path):
    burn = "import sys, time, pathlib; t = time.process_time()\nwhile time.process_time() - t < 0.6: pass\npathlib.Path(sys.argv[1]).write_text('x')"
    sleep = "import sys, time, pathlib; time.sleep(0.6); pathlib.Path(sys.argv[1]).write_text('x')"
    timing = run_steps(
        [step("burn", tmp_path / "b", code=burn), step("sleep", tmp_path / "s", code=sleep)],
        log_dir=tmp_path,
    )
    assert timing["burn"]["cpu_seconds"] >= 0.6 and timing["sleep"]["seconds"] >= 0.6
    assert timing["sleep"]["cpu_seconds"] < timing["burn"]["cpu_seconds"] - 0.4


def test_failure_names_step_and_missing_outputs(tmp_path):
    bad = Step(
        "bad", [], [tmp_path / "never"], program=[sys.executable, "-c", "raise SystemExit(3)"]
    )
    with pytest.raises(
        StepFailed, match=r"step 'bad' failed \(exit 3; missing outputs .*never.*log: .*bad.log"
    ):
        run_steps([bad], log_dir=tmp_path)
    later = step("later", tmp_path / "later")
    with pytest.raises(StepFailed, match=r"'bad'"):
        run_steps([bad, later], log_dir=tmp_path, workers=1)
    assert not (tmp_path / "later").exists()  # nothing starts after a failure
    with pytest.raises(ValueError, match="needs unknown steps"):
        run_steps([step("x", tmp_path / "x", needs=["nope"])], log_dir=tmp_path)
