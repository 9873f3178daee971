#!/usr/bin/env bash
# The whole GPU check in one call, for the device tool's `run` (carry [".device"], timeout_s 590):
#     bash bench/device_run.sh
# Before it, here: `make setup && bash bench/prepare_device.sh` (builds .device/, ~50 MiB, git-ignored).
# On the GPU machine: installs what .device/ carries (setup.sh), then the `cuda` tests (CPU against CUDA on that
# machine; HEAD_EXPLORER_REQUIRE_CUDA=1 makes a missing device a failure, not a skip) with the device and precision
# tests, then the side-by-side bench (bench/bench_device.py). Everything lands under $OUT as it is written, so a
# run cut short by its limit still brings back what it did: setup.txt, nvidia-smi.txt, tests.txt, tests.xml,
# bench.txt (one line per row, as measured), bench_results.json (at the bench's end) and summary.txt.
# Limits (seconds, overridable): TESTS_S for the tests, BENCH_S for the bench; the sum stays under the tool's 600.
set -uo pipefail
OUT=${OUT:-$PWD/device-out}
mkdir -p "$OUT"
TESTS_S=${TESTS_S:-180}
BENCH_S=${BENCH_S:-330}
start=$(date +%s)
# shellcheck disable=SC1091  # .device/setup.sh is built by prepare.sh
source .device/setup.sh > "$OUT/setup.txt" 2>&1 || { echo "setup failed:"; tail -20 "$OUT/setup.txt"; exit 1; }
cat "$OUT/setup.txt"
nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1 || true
export HEAD_EXPLORER_REQUIRE_CUDA=1 TOKENIZERS_PARALLELISM=false
# Only these files: collecting the whole suite would import Streamlit and Playwright, which the machine lacks.
timeout "$TESTS_S" python3 -m pytest -q -p no:cacheprovider --junitxml="$OUT/tests.xml" \
  tests/test_cuda.py tests/test_device.py tests/test_precision.py > "$OUT/tests.txt" 2>&1
tests_rc=$?
timeout "$BENCH_S" python3 -m bench device > "$OUT/bench.txt" 2>&1
bench_rc=$?
cp bench/results.json "$OUT/bench_results.json" 2>/dev/null || true
{
  echo "tests rc=$tests_rc (124: cut at ${TESTS_S}s): $(tail -n 1 "$OUT/tests.txt")"
  grep -E "^(FAILED|ERROR) " "$OUT/tests.txt"
  echo "bench rc=$bench_rc (1: a row missed its target; 124: cut at ${BENCH_S}s)"
  grep -E " s |t/s" "$OUT/bench.txt"
  echo "took $(( $(date +%s) - start )) s"
} | tee "$OUT/summary.txt"
[ "$tests_rc" = 0 ]
