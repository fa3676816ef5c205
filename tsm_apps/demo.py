"""``make demo``: the main job. Finished by the demo issue; for now it runs what exists."""
from __future__ import annotations


def main(argv: list[str]) -> int:
    print("tsm demo: the end-to-end demo is not assembled yet; "
          "available now: tsm synth, tsm train (see README).")
    return 0
