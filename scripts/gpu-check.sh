#!/usr/bin/env bash
# Issue #32's device check in one go: install the wheels carried along (no registry on
# the device), run the CUDA tests, then `custody bench ocr --device cuda --json` (batched
# engine beside the CPU lanes, stage profile, onnxruntime's profile), all written to $OUT.
# Without a CUDA provider it falls back to --device cpu, so it runs end to end anywhere
# (tests/scripts/test_gpu_check.py). Procedure and wheels: docs/ocr-benchmark.md, "Batched OCR".
#
#   OUT=/tmp/out scripts/gpu-check.sh          # PYTHON, WHEELS, PASSES, LIMIT, BUDGET_S optional
set -uo pipefail
OUT=${OUT:-bench-out/gpu-check}
PY=${PYTHON:-python3}
WHEELS=${WHEELS:-.whl}
PASSES=${PASSES:-5}
BUDGET_S=${BUDGET_S:-480}  # the whole check stays inside ~8 minutes
mkdir -p "$OUT"
log() { echo "gpu-check: $*" | tee -a "$OUT/gpu_check.log" >&2; }

# Wheels: whole ones, or one split into NAME.whl.part-aa, -ab, ... (split -b 60m) to fit a
# call's 64 MiB; parts carried by earlier calls wait in $WHEELS=/tmp/wheels on the warm machine.
joined=$(mktemp -d)
for first in "$WHEELS"/*.whl.part-aa; do
  [ -e "$first" ] || continue
  cat "${first%aa}"* >"$joined/$(basename "${first%.part-aa}")" && log "joined ${first%.part-aa}"
done
found=$(ls "$WHEELS"/*.whl "$joined"/*.whl 2>/dev/null || true)
if [ -n "$found" ]; then
  # shellcheck disable=SC2086
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site $found || { log "wheel install failed"; exit 3; }
  export PYTHONPATH=/tmp/site:${PYTHONPATH:-}
fi
export PYTHONPATH=$PWD:${PYTHONPATH:-}
export CUSTODY_HOME=${CUSTODY_HOME:-/tmp/custody-gpu-check}

device=cuda
if ! "$PY" -c 'from activities.engines.rapid_models import cuda_available as c; raise SystemExit(not c())'; then
  device=cpu && log "no CUDA provider here: measuring the batched engine on the CPU instead"
fi
"$PY" -c 'import onnxruntime as o; print(o.__version__, o.get_available_providers())' \
  >"$OUT/onnxruntime.txt" 2>&1

# The CUDA tests (they skip, with their reason, where no CUDA provider is offered).
timeout $((BUDGET_S / 3)) "$PY" -m pytest -q -rs -p no:cacheprovider \
  tests/activities/engines/batched/test_engine.py -k "cuda or tensorrt" \
  >"$OUT/gpu_tests.txt" 2>&1
log "CUDA tests: exit $?"

args=(bench ocr --json --device "$device" --passes "$PASSES" --profile-dir /tmp/gpu-check-prof)
[ -n "${LIMIT:-}" ] && args+=(--limit "$LIMIT")
[ -n "${CUSTODY_CORPUS:-}" ] && args+=(--corpus "$CUSTODY_CORPUS/ocr_gt")
timeout $((BUDGET_S * 2 / 3)) "$PY" -m starter.cli.main "${args[@]}" \
  >"$OUT/gpu_bench.json" 2>"$OUT/gpu_bench.err"
rc=$?
log "bench ocr --device $device: exit $rc"
exit $rc
