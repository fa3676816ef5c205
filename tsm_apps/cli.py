"""The ``tsm`` command. Sub-commands live with their packages and are imported lazily, so
``tsm train`` never imports mmdet and ``tsm detect`` does only when it runs.

Each sub-command module has ``main(argv: list[str]) -> int``. Bad input (``UserError``,
``ValueError``, ``FileNotFoundError``...) prints ``tsm <cmd>: error: ...`` and exits 2;
set ``TSM_DEBUG=1`` to see the traceback.
"""
from __future__ import annotations

import importlib
import os
import sys

COMMANDS = {
    "synth": ("tsm_apps.data.cli", "write the synthetic temporal or ImageNet-VID data sets"),
    "train": ("tsm_apps.train.cli", "train a TSM/TSN recognizer (torchrun-aware)"),
    "test": ("tsm_apps.train.evaluate", "multi-clip, multi-crop evaluation of a checkpoint"),
    "export": ("tsm_apps.export", "export a checkpoint to ONNX (offline or online step model)"),
    "detect": ("detection.cli", "R-FCN video detection: train, test, video"),
    "dissect": ("dissect.cli", "CAM dissection batch jobs and TSM vs TSN comparison"),
    "ui": ("ui.cli", "start the Streamlit app"),
    "bench": ("tsm_apps.bench", "measure the suite's performance figures"),
    "demo": ("tsm_apps.demo", "the main job: data, training, evaluation, dissection, report, UI"),
}
USER_ERRORS = (ValueError, TypeError, FileNotFoundError, NotADirectoryError, PermissionError,
               KeyError)


def _usage() -> str:
    lines = ["usage: tsm <command> [options]", "", "commands:"]
    lines += [f"  {name:<8} {help_}" for name, (_, help_) in COMMANDS.items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(_usage())
        return 0 if argv else 2
    cmd, rest = argv[0], argv[1:]
    if cmd not in COMMANDS:
        print(f"tsm: error: unknown command {cmd!r}\n\n{_usage()}", file=sys.stderr)
        return 2
    from .errors import UserError
    try:
        module = importlib.import_module(COMMANDS[cmd][0])
        return int(module.main(rest) or 0)
    except (UserError,) + USER_ERRORS as e:
        if os.environ.get("TSM_DEBUG"):
            raise
        msg = e.args[0] if isinstance(e, KeyError) and e.args else e
        print(f"tsm {cmd}: error: {msg}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"tsm {cmd}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
