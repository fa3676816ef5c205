#!/usr/bin/env bash
# Every CUDA check and figure of the suite in one run on a GPU machine (repo root):
#
#   OUT=runs/bench COMMIT=$(git rev-parse --short HEAD) bash benchmarks/cuda_session.sh \
#       [check] [core] [kernel] [demo] [datapath] [profile] [compile] [dissect] [detection]
#       # default: all but detection
#
# check:    benchmarks/check_cuda.py (compiled kernels and graphs == official shift / eager)
# core:     tsm bench --device cuda core            -> $OUT/cuda.json
# kernel:   benchmarks/bench_shift_kernel.py        -> $OUT/shift_kernel.json
# demo:     benchmarks/bench_online_demo.py         -> $OUT/online_demo.json (needs DEMO=path of
#           the official online_demo/mobilenet_v2_tsm.py; default .ext/mobilenet_v2_tsm.py)
# datapath: tsm bench --device cuda datapath         -> $OUT/datapath.json (needs PyAV)
# profile:  benchmarks/profile_train_step.py        (TSM vs TSN training step, by kernel)
# compile:  benchmarks/bench_compile.py             (torch.compile'd training steps vs eager)
# dissect:  tsm bench --device cuda dissect          -> $OUT/dissect.json (CAM cost / forward,
#           CAM and Grad-CAM clips/s; needs the grad-cam and ttach wheels in .whl/)
# detection: tsm bench --device cuda detection       -> $OUT/detection.json (R-FCN per frame and
#           training step, TSM/TSN; needs mmengine, mmdet and an mmcv 2.1.0 with CUDA ops built
#           for the machine's torch and Python: not in the default list)
#
# Runs with whatever python3 is there (PY=...); wheels in .whl/ (e.g. PyAV) are installed into
# /tmp/site first. The project need not be installed: the repo root goes on PYTHONPATH and the
# entry points are read from tsm_apps.egg-info (made by `pip install -e .`; carry it along).
set -u
OUT=${OUT:-runs/bench}
PY=${PY:-python3}
DEMO=${DEMO:-.ext/mobilenet_v2_tsm.py}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
if compgen -G ".whl/*.whl" >/dev/null; then
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl && export PYTHONPATH="$PYTHONPATH:/tmp/site"
fi
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(check core kernel demo datapath profile compile dissect)
{
  echo "commit ${COMMIT:-unknown}, $(date -u +%FT%TZ)"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem,temperature.gpu \
    --format=csv,noheader
  "$PY" -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
  nproc
} 2>&1 | tee "$OUT/machine.txt"
status=0
run() {  # name, timeout seconds, command...
  local name=$1 limit=$2; shift 2
  echo "=== $name ($(date -u +%T))"
  local t0=$SECONDS
  timeout "$limit" "$@"
  local rc=$?
  echo "=== $name: exit $rc in $((SECONDS - t0)) s"
  [ $rc -eq 0 ] || status=1
}
for s in "${steps[@]}"; do
  case $s in
    check) run check 150 "$PY" benchmarks/check_cuda.py ;;
    core) run core 240 "$PY" -m tsm_apps.bench.cli --device cuda --out "$OUT/cuda.json" core ;;
    kernel) run kernel 150 "$PY" benchmarks/bench_shift_kernel.py --out "$OUT/shift_kernel.json" ;;
    demo) run demo 90 bash -c "'$PY' benchmarks/bench_online_demo.py --device cuda --demo '$DEMO' \
            | tee '$OUT/online_demo.json'" ;;
    datapath) run datapath 300 "$PY" -m tsm_apps.bench.cli --device cuda \
                --out "$OUT/datapath.json" datapath ;;
    profile) run profile 120 "$PY" benchmarks/profile_train_step.py ;;
    compile) run compile 120 "$PY" benchmarks/bench_compile.py ;;
    dissect) run dissect 120 "$PY" -m tsm_apps.bench.cli --device cuda \
               --out "$OUT/dissect.json" dissect ;;
    detection) run detection 240 "$PY" -m tsm_apps.bench.cli --device cuda \
                 --out "$OUT/detection.json" detection ;;
    *) echo "unknown step $s"; status=1 ;;
  esac
done
exit $status
