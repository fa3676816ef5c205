"""The training loop and its hooks: event order, early stops, checkpoint entries, the class
whole (its step, state, resume and summary are its own methods), hooks through ``train``."""

import csv
from pathlib import Path

import pytest
import torch

import tsm_apps.train
from tests.test_tsm_apps.toy_videos import motion_videos
from tsm_apps.checkpoint.reading import read_checkpoint
from tsm_apps.data.dataset import VideoDataset
from tsm_apps.distributed import DistEnv
from tsm_apps.train import load_config, train
from tsm_apps.train.hooks import CheckpointHook, EvaluationHook, HookBase, LogHook, MultigridHook
from tsm_apps.train.log import MetricsLog
from tsm_apps.train.trainer import Trainer

# the entries of a checkpoint; each hook's state lives under "hooks", keyed by its class
CHECKPOINT_KEYS = [
    "format",
    "config",
    "state_dict",
    "meta",
    "optimizer",
    "scaler",
    "scheduler",
    "epoch",
    "step_in_epoch",
    "step",
    "rng",
    "comm",
    "hooks",
]
# the top-level entries of checkpoints written before hooks had their own (resume reads them)
FLAT_HOOK_KEYS = ["best_top1", "wall_s", "epoch_acc", "epoch_comm", "adaptive"]


class Recorder(HookBase):
    def __init__(self, stop_at: int = 0) -> None:
        self.events, self.stop_at = [], stop_at

    def before_train(self):
        self.events.append("before_train")

    def after_train(self):
        self.events.append("after_train")

    def before_epoch(self):
        self.events.append(f"before_epoch {self.loop.epoch}")

    def after_epoch(self):
        self.events.append(f"after_epoch {self.loop.epoch}")

    def before_step(self):
        self.events.append(f"before_step {self.loop.step}")

    def after_step(self):
        self.events.append(f"after_step {self.loop.step}")
        if self.loop.step == self.stop_at:
            self.loop.stopped = True


def _sets() -> tuple:
    videos, labels = motion_videos(12, frames=4, size=32)
    tr = VideoDataset.from_tensor(videos[:8], labels[:8], True, 2, 32)
    va = VideoDataset.from_tensor(videos[8:], labels[8:], False, 2, 32)
    return tr, va


def _config(tmp_path: Path, **kw):
    base = dict(
        arch="resnet18",
        width=0.125,
        segments=2,
        size=32,
        epochs=2,
        batch_size=4,
        dropout=0.0,
        work_dir=str(tmp_path),
        progress=False,
        tensorboard=False,
    )
    return load_config(**dict(base, **kw))


def _trainer(tmp_path: Path, hooks=None, **kw) -> Trainer:
    tr, va = _sets()
    return Trainer(_config(tmp_path, **kw), DistEnv(), torch.device("cpu"), tr, va, 2, hooks=hooks)


def test_default_hooks_in_order_and_events_around_each_step(tmp_path):
    t = _trainer(tmp_path)
    assert [type(h) for h in t.hooks] == [EvaluationHook, LogHook, CheckpointHook]
    assert isinstance(_trainer(tmp_path, multigrid={"enabled": True}).hooks[0], MultigridHook)
    rec = Recorder()
    t.register_hooks([rec])
    s = t.fit()
    assert (s["epochs"], s["steps"], s["stopped"]) == (2, 4, False)
    assert rec.events == [
        "before_train",
        "before_epoch 0",
        "before_step 0",
        "after_step 1",
        "before_step 1",
        "after_step 2",
        "after_epoch 1",
        "before_epoch 1",
        "before_step 2",
        "after_step 3",
        "before_step 3",
        "after_step 4",
        "after_epoch 2",
        "after_train",
    ]
    assert (tmp_path / "eval.json").is_file() and (tmp_path / "best.pth").is_file()
    ck = read_checkpoint(tmp_path / "last.pth")
    assert list(ck) == CHECKPOINT_KEYS
    assert (ck["epoch"], ck["step_in_epoch"], ck["step"]) == (2, 0, 4)
    assert list(ck["hooks"]) == ["EvaluationHook", "LogHook"]  # the checkpoint hook keeps none
    assert set(ck["hooks"]["EvaluationHook"]) == {"best_top1", "meta"}
    assert set(ck["hooks"]["LogHook"]) == {"wall_s", "epoch_acc", "epoch_comm"}
    assert set(ck["meta"]) >= {"train_config", "val", "best_val"}
    assert ck["meta"]["val"] == ck["hooks"]["EvaluationHook"]["meta"]["val"]


def test_a_hook_stops_the_run_after_a_step(tmp_path):
    rec = Recorder(stop_at=1)
    t = _trainer(tmp_path, hooks=[rec])  # no checkpoint or evaluation hook
    s = t.fit()
    assert (s["epochs"], s["steps"], s["stopped"], s["signal"]) == (0, 1, True, 0)
    assert rec.events[-2:] == ["after_step 1", "after_train"]
    assert not (tmp_path / "last.pth").exists() and not (tmp_path / "eval.json").exists()


def test_max_steps_saves_last_and_writes_no_eval(tmp_path):
    s = _trainer(tmp_path, max_steps=3).fit()
    assert (s["steps"], s["stopped"]) == (3, True)
    ck = read_checkpoint(tmp_path / "last.pth")
    assert (ck["epoch"], ck["step_in_epoch"], ck["step"]) == (1, 1, 3)
    assert not (tmp_path / "eval.json").exists()


def test_hooks_are_checked():
    t = Trainer.__new__(Trainer)
    t.hooks = []
    with pytest.raises(TypeError, match="HookBase"):
        t.register_hooks([object()])


class Counter(HookBase):
    """A hook with state: how many steps it saw (``count``)."""

    def __init__(self) -> None:
        self.count = 0

    def after_step(self):
        self.count += 1

    def state_dict(self):
        return {"count": self.count}

    def load_state_dict(self, state):
        self.count = state["count"]


class Doubler(Counter):
    """Another hook whose state has the same entry name: twice the steps."""

    def after_step(self):
        self.count += 2


def test_each_hooks_state_has_its_own_entry_and_comes_back_on_resume(tmp_path):
    t = _trainer(tmp_path, max_steps=3, hooks=[Counter(), Doubler(), CheckpointHook()])
    t.fit()
    ck = read_checkpoint(tmp_path / "last.pth")
    assert ck["hooks"] == {"Counter": {"count": 3}, "Doubler": {"count": 6}}
    again = _trainer(tmp_path, resume=True, hooks=[Counter(), Doubler()])
    assert again.resume() and [h.count for h in again.hooks] == [3, 6]
    assert again.step == 3


def test_a_checkpoint_from_before_hook_entries_resumes(tmp_path):
    """Older checkpoints kept the hooks' entries at the top level: resume still reads them."""
    _trainer(tmp_path, max_steps=3).fit()
    ck = read_checkpoint(tmp_path / "last.pth")
    hooks = ck.pop("hooks")
    flat = dict(ck, **hooks["EvaluationHook"], **hooks["LogHook"], adaptive={})
    flat["meta"] = dict(ck["meta"], val={"top1": 12.5}, best_val={"top1": 25.0})
    flat["best_top1"], flat["wall_s"] = 25.0, 7.5
    assert set(FLAT_HOOK_KEYS) <= set(flat) and "hooks" not in flat
    torch.save(flat, tmp_path / "last.pth")
    t = _trainer(tmp_path, resume=True)
    assert t.resume()
    evaluation, log = t.hooks[0], t.hooks[1]
    assert (evaluation.best_top1, evaluation.last_val, evaluation.best_val) == (
        25.0,
        {"top1": 12.5},
        {"top1": 25.0},
    )
    assert log.wall == 7.5 and t.step == 3


def test_one_hook_of_a_class():
    t = Trainer.__new__(Trainer)
    t.hooks = []
    with pytest.raises(ValueError, match="two hooks of class Counter"):
        t.register_hooks([Counter(), Counter()])


def test_the_trainer_writes_its_step_state_resume_and_summary_itself():
    for name in ("train_step", "state_dict", "resume", "summary", "run_step", "fit"):
        method = getattr(Trainer, name)
        assert (method.__qualname__, method.__module__) == (
            f"Trainer.{name}",
            "tsm_apps.train.trainer",
        )


def test_train_takes_the_loops_hooks_in_place_of_the_defaults(tmp_path):
    rec = Recorder()
    tr, va = _sets()
    s = train(_config(tmp_path, epochs=1), tr, va, 2, hooks=[rec])
    assert (s["epochs"], s["steps"], s["best_top1"], s["rank"]) == (1, 2, -1.0, 0)
    assert rec.events == [
        "before_train",
        "before_epoch 0",
        "before_step 0",
        "after_step 1",
        "before_step 1",
        "after_step 2",
        "after_epoch 1",
        "after_train",
    ]
    assert not (tmp_path / "last.pth").exists()  # no checkpoint hook among them


def _train_imports() -> dict:
    """``{module: {imported tsm_apps.train modules}}`` of every file under tsm_apps/train, read
    from the source (``TYPE_CHECKING`` imports included), relative imports resolved."""
    import ast

    root = Path(tsm_apps.train.__file__).parent
    graph = {}
    for path in root.rglob("*.py"):
        parts = ["tsm_apps", "train", *path.relative_to(root).with_suffix("").parts]
        package = parts[:-1] if parts[-1] != "__init__" else parts[:-1]
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        deps = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                base = package[: len(package) - node.level + 1] if node.level else []
                mod = ".".join(base + (node.module.split(".") if node.module else []))
                deps |= {mod} | {f"{mod}.{a.name}" for a in node.names}
            elif isinstance(node, ast.Import):
                deps |= {a.name for a in node.names}
        graph[name] = deps
    return {m: {d for d in deps if d in graph and d != m} for m, deps in graph.items()}


def test_hooks_never_import_the_trainer_and_training_has_no_import_cycle():
    graph = _train_imports()
    hooks = [m for m in graph if m.startswith("tsm_apps.train.hooks")]
    assert len(hooks) == 9 and "tsm_apps.train.trainer" in graph
    assert all("tsm_apps.train.trainer" not in graph[m] for m in hooks)
    assert "tsm_apps.train.hooks.base" in graph["tsm_apps.train.hooks.checkpoint"]
    state = {}

    def visit(m, path):
        if state.get(m) == "open":
            raise AssertionError(f"import cycle: {' -> '.join(path + [m])}")
        if state.get(m) != "done":
            state[m] = "open"
            for d in sorted(graph[m]):
                visit(d, path + [m])
            state[m] = "done"

    for m in sorted(graph):
        visit(m, [])


def test_the_log_hook_never_waits_for_a_step_loss_and_sums_it_as_python_floats(
    tmp_path, monkeypatch
):
    """Reading a CUDA loss waits for the GPU: ``LogHook.after_step`` reads none (no
    ``train_step`` rows, bar off), yet the epoch's ``train`` row is the float64 sum of each
    step's loss times its clips, added up as Python floats (the formula before the sum moved to
    the device), bit for bit."""
    reads, inside, losses = [0], [False], []
    real_float, real_item = torch.Tensor.__float__, torch.Tensor.item

    def counting(fn):
        def read(self, *a):
            reads[0] += inside[0]
            return fn(self, *a)

        return read

    monkeypatch.setattr(torch.Tensor, "__float__", counting(real_float))
    monkeypatch.setattr(torch.Tensor, "item", counting(real_item))
    real_after_step = LogHook.after_step

    def after_step(self):
        losses.append((real_float(self.loop.loss), len(self.loop.batch[1])))
        inside[0] = True
        try:
            real_after_step(self)
        finally:
            inside[0] = False

    monkeypatch.setattr(LogHook, "after_step", after_step)
    rows, real_write = [], MetricsLog.write

    def write(self, **row):
        rows.append(row)
        return real_write(self, **row)

    monkeypatch.setattr(MetricsLog, "write", write)
    _trainer(tmp_path, epochs=1).fit()
    assert reads[0] == 0 and len(losses) == 2
    want = 0.0
    for loss, clips in losses:
        want = want + loss * clips
    train = [r for r in rows if r["split"] == "train"]
    assert len(train) == 1 and train[0]["loss"] == want / 8  # exact, not the CSV's 6 digits
    with open(tmp_path / "metrics.csv", newline="") as f:
        assert [r["split"] for r in csv.DictReader(f)].count("train") == 1
