# The two commands of the README. Both create/refresh .venv first (tools/bootstrap.sh).
PY := .venv/bin/python
export PYTHONUNBUFFERED := 1

.PHONY: demo test venv
venv:
	@bash tools/bootstrap.sh

test: venv
	$(PY) -m pytest -q -p no:cacheprovider

demo: venv
	$(PY) -m tsm_apps.cli demo
