#!/usr/bin/env bash
# Lint the checkout with ruff (configuration: [tool.ruff] in pyproject.toml): the layout
# (`ruff format`), then pyflakes (unused, duplicate and undefined names), isort and pycodestyle.
# Changes nothing; exits 1 on a finding. To apply what it can fix:
#   .venv/bin/ruff format . && .venv/bin/ruff check --fix .
set -euo pipefail
cd "$(dirname "$0")/.."
"${RUFF:-.venv/bin/ruff}" format --check .
"${RUFF:-.venv/bin/ruff}" check .
