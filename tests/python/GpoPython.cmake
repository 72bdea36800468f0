# What the Python tests and examples share: Debian's own interpreter
# (/usr/bin/python3, the one a user of the Debian packages has, not whichever
# python3 comes first on PATH), and the environment that lets an
# uninstrumented interpreter load the sanitizer build of libgpuopt.so.

find_program(GPO_SYSTEM_PYTHON3 python3 PATHS /usr/bin NO_DEFAULT_PATH
             DOC "Debian's python3, for the binding and example tests")

set(GPO_PYTHON_TEST_ENV "PYTHONDONTWRITEBYTECODE=1"
    "PYTHONPATH=${PROJECT_SOURCE_DIR}/bindings/python")
if(GPUOPT_SANITIZE)
  # ASan must be the first library in the process; python itself is not
  # built with it, so preload the runtime. The interpreter's own allocations
  # are not ours to judge: leak checking stays with the C tests.
  execute_process(COMMAND ${CMAKE_C_COMPILER} -print-file-name=libasan.so
                  OUTPUT_VARIABLE GPO_LIBASAN OUTPUT_STRIP_TRAILING_WHITESPACE)
  list(APPEND GPO_PYTHON_TEST_ENV "LD_PRELOAD=${GPO_LIBASAN}" "ASAN_OPTIONS=detect_leaks=0")
endif()
