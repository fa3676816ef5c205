#!/usr/bin/env bash
# Lint the checkout with ruff (configuration: [tool.ruff] in pyproject.toml): the rules
# (pyflakes, isort, pycodestyle) and the formatter's check. Changes nothing; exits 1 when either
# finds something (both always run). To apply what they can fix:
#   .venv/bin/ruff check --fix . && .venv/bin/ruff format .
set -uo pipefail
cd "$(dirname "$0")/.."
RUFF="${RUFF:-.venv/bin/ruff}"
status=0
"$RUFF" check . || status=1
"$RUFF" format --check . || status=1
exit "$status"
