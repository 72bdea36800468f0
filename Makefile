# The two commands: `make run` (set up, build the library and the command,
# show the devices and the plan) and `make check` (set up, build everything,
# every test, then every test again under ASan/UBSan with the
# allocation-failure sweep, the thread tests under ThreadSanitizer, and the
# fuzz targets' seed replay and smoke). `make check-full` is the same with
# the sweep failing every allocation; `make fuzz` fuzzes each target for
# FUZZ_SECONDS. `make install` and `make uninstall` put the build in PREFIX
# and take it out again. Everything else is CMake: this file only names the
# presets in CMakePresets.json, as Neovim's Makefile does.

PREFIX ?= /usr/local
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE ?= cmake
CTEST ?= ctest
# CMake's own makefiles run as sub-makes: keep their chatter out.
MAKEFLAGS += --no-print-directory

# Debian packages. Vendor GPU SDKs are not among them: the library opens
# vendor drivers at run time.
# `make run` and `make install` (the library and the command):
#   cmake, pkg-config, build-essential   the build
#   libcjson-dev                         JSON (config file, exports)
#   ocl-icd-opencl-dev opencl-c-headers  OpenCL backend (Khronos headers)
RUN_DEPS := cmake pkg-config build-essential libcjson-dev ocl-icd-opencl-dev opencl-c-headers
# `make check` adds what only the tests use:
#   libcmocka-dev                        the unit tests
#   pocl-opencl-icd clinfo               a real OpenCL CPU device for the tests
#   libamdhip64-dev                      real HIP runtime (no-device paths), amd64 only
#   python3 python3-venv python3-pip     Debian's python for the ctypes binding, and a venv
#   python3-setuptools python3-wheel     that pip-installs the package with no network
#   python3-wheel-whl                    (the wheel package inside a venv of its own)
#   python3-torch                        Debian's PyTorch (CPU, 1.13): gpuopt.torch's tests
#   mandoc                               lints the manual pages (mandoc -T lint)
#   slurmd                               Slurm's own parser reads `gpuopt gres` output
#                                        (slurmd -G, no daemon started: tests/cli/
#                                        test_gres_slurmd.sh; skipped without it)
#   clang                                libFuzzer (tests/fuzz) and its sanitizers
#   strace                               the set-user-ID test (tests/security)
# (python3 also runs the allocation-failure sweep, tests/alloc.)
CHECK_DEPS := $(RUN_DEPS) libcmocka-dev pocl-opencl-icd clinfo python3 python3-venv \
              python3-pip python3-setuptools python3-wheel python3-wheel-whl python3-torch \
              mandoc slurmd clang strace
ifeq ($(shell dpkg --print-architecture 2>/dev/null),amd64)
CHECK_DEPS += libamdhip64-dev
endif
# Benchmark-only packages, kept out of run and check. Today's bench/ needs
# neither (it times processes with its own bench_spawn); they are here for
# cross-checking those timings (hyperfine) and for benchmarks against a
# tuned CPU BLAS (OpenBLAS).
BENCH_DEPS := hyperfine libopenblas-dev

.PHONY: all deps check-deps bench-deps build build-run build-asan build-tsan build-fuzz run \
        check check-full test test-asan test-asan-full test-tsan fuzz-smoke fuzz bench install \
        uninstall clean
# Prerequisites run in the order written (deps before build), even under -j.
.NOTPARALLEL:

all: build

# Installs the packages that are missing, and nothing when all are there.
define install_missing
	@missing=; \
	if ! command -v dpkg-query >/dev/null 2>&1; then \
	  echo "make deps: not a Debian system (no dpkg-query); install the equivalents of: $(1)"; \
	  exit 0; \
	fi; \
	for p in $(1); do \
	  [ "$$(dpkg-query -W -f='$${db:Status-Status}' "$$p" 2>/dev/null)" = installed ] || missing="$$missing $$p"; \
	done; \
	if [ -z "$$missing" ]; then echo "make deps: all packages installed"; exit 0; fi; \
	echo "make deps: installing$$missing"; \
	sudo=; [ "$$(id -u)" -eq 0 ] || sudo=sudo; \
	$$sudo env DEBIAN_FRONTEND=noninteractive apt-get update && \
	$$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $$missing
endef

deps:
	$(call install_missing,$(RUN_DEPS))

check-deps:
	$(call install_missing,$(CHECK_DEPS))

bench-deps:
	$(call install_missing,$(BENCH_DEPS))

build:
	$(CMAKE) --preset default
	$(CMAKE) --build --preset default -j $(JOBS)

# The library and the command only (preset "run": no tests, test doubles,
# examples or benchmarks), in build/ beside the full tree: what `make check`
# built stays built. The build's own output goes to build/make-run.log;
# shown are its warnings, and its end when it fails.
build-run:
	@mkdir -p build
	@echo "make: building libgpuopt and the gpuopt command (the log: build/make-run.log)"
	@{ $(CMAKE) --preset run && $(CMAKE) --build --preset run -j $(JOBS); } \
	  >build/make-run.log 2>&1 || { tail -n 40 build/make-run.log; \
	  echo "make: the build failed; build/make-run.log has all of it"; exit 1; }
	@grep -E 'warning:' build/make-run.log || true
	@echo "make: built $$(grep -c 'Built target' build/make-run.log) targets"

build-asan:
	$(CMAKE) --preset asan
	$(CMAKE) --build --preset asan -j $(JOBS)

# The library and the thread tests only.
build-tsan:
	$(CMAKE) --preset tsan
	$(CMAKE) --build --preset tsan -j $(JOBS)

build-fuzz:
	$(CMAKE) --preset fuzz
	$(CMAKE) --build --preset fuzz -j $(JOBS)

run: deps build-run
	build/bin/gpuopt devices
	build/bin/gpuopt plan

test: build
	$(CTEST) --preset default -j $(JOBS)

# Includes the allocation-failure sweep (label allocfail), which tries every
# STRIDE-th allocation of each scenario (the strides: tests/alloc).
test-asan: build-asan
	$(CTEST) --preset asan -j $(JOBS)

# The same with the sweep failing every allocation in turn.
test-asan-full: build-asan
	GPO_ALLOC_STRIDE=1 $(CTEST) --preset asan -j $(JOBS)

# The thread tests under ThreadSanitizer (suppressions: tests/tsan.supp).
test-tsan: build-tsan
	$(CTEST) --preset tsan -j $(JOBS)

# Every committed seed of every fuzz target replayed, then each target
# fuzzed for FUZZ_SMOKE_SECONDS; any crash, leak or sanitizer report fails.
FUZZ_SMOKE_SECONDS ?= 10
fuzz-smoke: build-fuzz
	tests/fuzz/run_fuzz.sh build-fuzz $(FUZZ_SMOKE_SECONDS)

# Fuzzing proper: each target for FUZZ_SECONDS (the corpus it grows stays in
# build-fuzz/fuzz-corpus; findings in build-fuzz/fuzz-findings).
FUZZ_SECONDS ?= 600
fuzz: build-fuzz
	tests/fuzz/run_fuzz.sh build-fuzz $(FUZZ_SECONDS)

check: check-deps test test-asan test-tsan fuzz-smoke

check-full: check-deps test test-asan-full test-tsan fuzz-smoke

# The figures of docs/benchmarks.md, as markdown on stdout.
bench: build
	bench/run.sh build

# Installs to PREFIX: the library, headers, the command, pkg-config and CMake
# files, the manual pages, bash completion, and the Python package where
# PREFIX's python3 looks (the install names the directory).
install: deps build-run
	$(CMAKE) --install build --prefix "$(PREFIX)"

# Removes what the last `make install` wrote (build/install_manifest.txt).
uninstall:
	$(CMAKE) -DMANIFEST=build/install_manifest.txt -P cmake/GpuoptUninstall.cmake

clean:
	rm -rf build build-asan build-tsan build-fuzz
