#!/usr/bin/env bash
# The ARM64 build's tests under QEMU user mode, once per emulated CPU. Each
# run names the Highway targets it must exercise (LEAKY_TEST_EXPECT_TARGETS:
# Targets.AsExpectedOnThisCpu fails on any difference, so none is skipped
# silently) and the SVE vector width it must see.
#   tests/arm64/run.sh BUILD_DIR full    every test on every CPU (make test-arm64)
#   tests/arm64/run.sh BUILD_DIR quick   the bounded subset make test runs
set -euo pipefail
build=$1 mode=${2:-quick}
# name | QEMU_CPU | targets, best first | SVE bits
cpus=(
  "neon|cortex-a72|NEON|"
  "sve128|max,sve128=on|SVE2_128,SVE2,SVE,NEON|128"
  "sve256|max,sve256=on|SVE_256,SVE2,SVE,NEON|256"
  "sve512|max,sve512=on|SVE2,SVE,NEON|512"
  "sve2048|max,sve2048=on,sve-default-vector-length=256|SVE2,SVE,NEON|2048"
)
# quick: every f16/bf16 pattern (and the FTZ cases, the FP guard, the
# Philox stream and the family) on NEON and on SVE at 256 and 2048 bits, the
# quick size sweep on 256-bit SVE, and the indexed kernels (random streams,
# mask bits: 64 f32 lanes per vector) on 2048-bit SVE.
quick_tests='^(Targets|Codecs|Conversions|ExhaustiveHalf|RandomWide|Executor|ThreadPool|IndexedOps|BiasAct|BiasActDropout|Philox|Rrelu|Prelu|EluAccuracy)[.]'
# The 8-bit byte tables (TableLookupBytes per 128-bit block on NEON and on
# every SVE width) and the conv epilogue, with the suites that take a few
# seconds under QEMU (fp8 forward and backward of every op but ELU's and
# PReLU's backward, every code; the epilogue's exact cases).
quick_tests+='|^EightBit(Fp8[.](LeakyReluForward|PlainReluForward|Prelu|RreluEval|Elu|PlainReluBackward|LeakyReluBackward|RreluEvalBackward)|Fp8Conversions[.].*|Quantized[.](InterleavedParameters|RreluEvalSlopeInDouble)|Errors[.].*|Reference[.].*|Epilogue[.](RandomAccumulators|Ties|FastPathBoundary|Extremes|Multipliers|BadInput))$'
# On NEON only (minutes under QEMU on every CPU; the SVE CPUs run the same
# kernels above): the table builders' exact arithmetic in aarch64's
# 113-bit long double (the quantized grids but LeakyReLU's 54 s, which
# builds its table as PReLU's and RReLU's do), ELU's fp8 backward with one
# parameter set (LEAKY_TEST_ONE_PARAMETER_SET: ELU's four quick sets took
# 245 s), and the epilogue's adversarial cases under every rounding mode.
# PReLU's fp8 backward (41 s on NEON with one set) stays in test-arm64:
# its per-channel tables are those of the forward above.
neon_tests='|^EightBit(Quantized[.](PlainRelu|RreluEval|Prelu|Elu)|Fp8[.]EluBackward|Epilogue[.]FoldedPath)$'
declare -A quick_filter=(
  [neon]="$quick_tests$neon_tests"
  [sve256]="$quick_tests|^KernelSizes[.]leaky_relu_(forward|backward)_Codec(F16|F32)\$"
  [sve2048]="$quick_tests|^IndexedKernelSizes[.]"
)
status=0
quick_only=''
[ "$mode" = quick ] && quick_only=1
for entry in "${cpus[@]}"; do
  IFS='|' read -r name cpu targets bits <<< "$entry"
  filter=''
  if [ "$mode" = quick ]; then
    [ -n "${quick_filter[$name]:-}" ] || continue
    filter=${quick_filter[$name]}
  fi
  echo "== arm64 $name (QEMU_CPU=$cpu): targets $targets${bits:+, SVE $bits-bit}"
  start=$(date +%s)
  if ! QEMU_CPU=$cpu LEAKY_TEST_EXPECT_TARGETS=$targets LEAKY_TEST_EXPECT_SVE_BITS=$bits \
      LEAKY_TEST_QUICK_SWEEP=1 env ${quick_only:+LEAKY_TEST_ONE_PARAMETER_SET=1} \
      ctest --test-dir "$build" --output-on-failure --no-tests=error -j "$(nproc)" \
        ${filter:+-R "$filter"}; then
    status=1
  fi
  echo "== arm64 $name: $(( $(date +%s) - start )) s"
done
exit $status
