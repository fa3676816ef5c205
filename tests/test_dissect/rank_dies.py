"""``tsm`` with rank ``DIE_RANK`` dying (``os._exit(1)``) right after finishing its first clip:
a killed process, as torchrun sees one. Used by test_dissect_distributed.py."""

import os
import sys

import dissect.job as job
from tsm_apps.cli import main

_real = job.process_clip


def _dies_after_one(ctx, entry):
    record = _real(ctx, entry)
    if os.environ.get("RANK") == os.environ.get("DIE_RANK"):
        os._exit(1)
    return record


job.process_clip = _dies_after_one
sys.exit(main())
