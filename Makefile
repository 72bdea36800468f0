# The two commands: `make run` (set up, build, show the devices and the plan)
# and `make check` (set up, build, every test, then every test again under
# ASan/UBSan with the allocation-failure sweep, the thread tests under
# ThreadSanitizer, and the fuzz targets' seed replay and smoke). `make
# check-full` is the same with the sweep failing every allocation; `make
# fuzz` fuzzes each target for FUZZ_SECONDS. Everything else is CMake: this
# file only names the presets in CMakePresets.json, as Neovim's Makefile does.

PREFIX ?= /usr/local
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE ?= cmake
CTEST ?= ctest
# CMake's own makefiles run as sub-makes: keep their chatter out.
MAKEFLAGS += --no-print-directory

# Debian packages that `make run` and `make check` need. Vendor GPU SDKs are
# not among them: the library opens vendor drivers at run time.
#   cmake, pkg-config, build-essential   the build, and the packaging tests
#   libcjson-dev                         JSON (config file, exports)
#   libcmocka-dev                        the unit tests
#   ocl-icd-opencl-dev opencl-c-headers  OpenCL backend (Khronos headers)
#   pocl-opencl-icd clinfo               a real OpenCL CPU device for the tests
#   libamdhip64-dev                      real HIP runtime (no-device paths), amd64 only
#   python3                              Debian's python for the ctypes binding
#                                        tests and the allocation-failure sweep
#   clang                                libFuzzer (tests/fuzz) and its sanitizers
#   strace                               the set-user-ID test (tests/security)
DEPS := cmake pkg-config build-essential libcjson-dev libcmocka-dev \
        ocl-icd-opencl-dev opencl-c-headers pocl-opencl-icd clinfo python3 clang strace
ifeq ($(shell dpkg --print-architecture 2>/dev/null),amd64)
DEPS += libamdhip64-dev
endif
# Benchmark-only packages, kept out of run and check. Today's bench/ needs
# neither (it times processes with its own bench_spawn); they are here for
# cross-checking those timings (hyperfine) and for benchmarks against a
# tuned CPU BLAS (OpenBLAS).
BENCH_DEPS := hyperfine libopenblas-dev

.PHONY: all deps bench-deps build build-asan build-tsan build-fuzz run check check-full test \
        test-asan test-asan-full test-tsan fuzz-smoke fuzz bench install clean
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
	$(call install_missing,$(DEPS))

bench-deps:
	$(call install_missing,$(BENCH_DEPS))

build:
	$(CMAKE) --preset default
	$(CMAKE) --build --preset default -j $(JOBS)

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

run: deps build
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

check: deps test test-asan test-tsan fuzz-smoke

check-full: deps test test-asan-full test-tsan fuzz-smoke

# The figures of docs/benchmarks.md, as markdown on stdout.
bench: build
	bench/run.sh build

install: build
	$(CMAKE) --install build --prefix "$(PREFIX)"

clean:
	rm -rf build build-asan build-tsan build-fuzz
