#!/usr/bin/env bash
# Create or refresh .venv with everything the suite needs. Idempotent: a stamp keyed on the
# dependency files skips the work when nothing changed. mmcv 2.1.0 has no wheel for torch 2.14,
# so its sdist is built once per machine (C++ standard raised to C++20) and the wheel cached
# under ~/.cache/tsm_apps/wheels.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null || PY=python3
VENV=.venv
CACHE=${TSM_CACHE:-$HOME/.cache/tsm_apps}
WHEELS=$CACHE/wheels
STAMP=$VENV/.tsm_stamp
# The real-browser UI test drives Debian's Chromium with Playwright (never a downloaded browser).
if ! command -v chromium >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "[bootstrap] installing Debian chromium for the browser test"
  apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
want=$(cat pyproject.toml tools/bootstrap.sh tools/requirements.txt | sha256sum | cut -c1-16)
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ] && [ -x "$VENV/bin/python" ]; then
  exit 0
fi
echo "[bootstrap] setting up $VENV (stamp $want)"
# a new environment takes ~7.1 GB (torch's CUDA libraries are most of it): refuse early, in one
# line, rather than let pip fail half-way with "No space left on device"
if [ ! -x "$VENV/bin/python" ]; then
  free_kb=$(df -Pk . | awk 'NR==2 {print $4}')
  if [ "$free_kb" -lt $((7500 * 1024)) ]; then
    echo "[bootstrap] error: $(pwd) has $((free_kb / 1024)) MiB free; a new $VENV needs about 7,500 MiB" >&2
    exit 2
  fi
fi
[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
PIP="$VENV/bin/python -m pip"
$PIP install -q --upgrade pip wheel
$PIP install -q torch==2.14.1 torchvision==0.29.1
# mmcv's setup.py and mmengine import pkg_resources, which setuptools >= 81 no longer ships
$PIP install -q "setuptools>=77.0.3,<81"
mkdir -p "$WHEELS"
mmcv_whl=$(ls "$WHEELS"/mmcv-2.1.0-*.whl 2>/dev/null | head -n1 || true)
if [ -z "$mmcv_whl" ]; then
  echo "[bootstrap] building mmcv 2.1.0 with ops from source (one time per machine, ~25 min on 2 cores)"
  $PIP install -q ninja psutil
  build=$(mktemp -d)
  $PIP download -q --no-deps --no-binary :all: --no-build-isolation -d "$build" mmcv==2.1.0
  tar -xzf "$build"/mmcv-2.1.0.tar.gz -C "$build"
  sed -i -e 's/-std=c++14/-std=c++20/g' -e 's/-std=c++17/-std=c++20/g' "$build"/mmcv-2.1.0/setup.py
  (cd "$build"/mmcv-2.1.0 && MMCV_WITH_OPS=1 MAX_JOBS=${MAX_JOBS:-2} \
     "$OLDPWD/$VENV/bin/python" -m pip wheel -q --no-deps --no-build-isolation -w "$build/dist" .)
  cp "$build"/dist/mmcv-2.1.0-*.whl "$WHEELS"/
  rm -rf "$build"
  mmcv_whl=$(ls "$WHEELS"/mmcv-2.1.0-*.whl | head -n1)
fi
$PIP install -q "$mmcv_whl"
# pyproject.toml lists what the product (and its tests) need; tools/requirements.txt pins them
$PIP install -q -c tools/requirements.txt -e ".[test]"
# mmcv pulls opencv-python, whose cv2 lacks the contrib modules (TV-L1 flow): the contrib build
# must be the cv2 on disk
$PIP install -q --force-reinstall --no-deps -c tools/requirements.txt opencv-contrib-python-headless
echo "$want" > "$STAMP"
echo "[bootstrap] ready: $VENV"
