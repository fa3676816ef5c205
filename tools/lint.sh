#!/usr/bin/env bash
# Lint the checkout with ruff (configuration: [tool.ruff] in pyproject.toml): pyflakes (unused,
# duplicate and undefined names), isort and pycodestyle. Changes nothing; exits 1 on a finding.
# To apply what it can fix: .venv/bin/ruff check --fix .
# `ruff format` is not enforced: the code keeps its hand-wrapped layout (see pyproject.toml).
set -euo pipefail
cd "$(dirname "$0")/.."
"${RUFF:-.venv/bin/ruff}" check .
