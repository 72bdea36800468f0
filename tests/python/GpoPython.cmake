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

# The variables a plan (or torch) reads, unset for the tests that apply plans
# (ENVIRONMENT_MODIFICATION): unset, not empty, since an empty variable is one
# the user set, and kept.
set(GPO_PLAN_VARIABLES OMP_NUM_THREADS MKL_NUM_THREADS OMP_PLACES OMP_PROC_BIND
    ONEDNN_DEFAULT_FPMATH_MODE PYTORCH_CUDA_ALLOC_CONF CUDA_MODULE_LOADING)
list(TRANSFORM GPO_PLAN_VARIABLES APPEND "=unset:" OUTPUT_VARIABLE GPO_UNSET_PLAN_VARIABLES)
