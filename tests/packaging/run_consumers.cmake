cmake_policy(VERSION 3.25)
# Installs the build into a fresh prefix and uses it as a user would:
#   - the installed tree holds the header, both libraries, the CLI, gpuopt.pc,
#     the CMake package and the Python package;
#   - pkg-config answers for the prefix it was installed to;
#   - consumer.c builds through `pkg-config --cflags --libs gpuopt` and runs
#     against the installed shared library; again with `pkg-config --static`
#     against libgpuopt.a;
#   - consumer/ builds through find_package(gpuopt CONFIG) with
#     gpuopt::gpuopt and with gpuopt::gpuopt_static, and runs; gpuopt::gpuopt
#     also where cJSON's CMake package cannot be found (only the static
#     library needs it), and COMPONENTS static then says what is missing;
#   - examples/ builds as a project of its own against the install, and runs;
#   - the manual pages and the bash completion are installed;
#   - the version file accepts this major version and refuses the next one
#     and a newer minor;
#   - the installed CLI and the installed Python package run, the package
#     loading the library installed with it.
#
# -D arguments: BUILD_DIR, SOURCE_DIR (tests/packaging), EXAMPLES_DIR, WORK_DIR, VERSION,
# LIBDIR, INCLUDEDIR, BINDIR (relative, as GNUInstallDirs gives them),
# C_COMPILER, SAN_FLAGS (compiler flags in one string, empty outside the
# sanitizer build),
# PKG_CONFIG, PYTHON (may be empty), PYTHON_PRELOAD (may be empty).

set(prefix "${WORK_DIR}/prefix")
separate_arguments(san_list UNIX_COMMAND "${SAN_FLAGS}")
set(libdir "${prefix}/${LIBDIR}")
set(problems "")

function(problem text)
  set(problems "${problems}\n  - ${text}" PARENT_SCOPE)
endfunction()

# Runs a command; fails the whole test at once if it fails (later steps
# would only repeat the error).
function(must out_var)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                  WORKING_DIRECTORY "${WORK_DIR}")
  if(NOT rc STREQUAL "0")
    string(REPLACE ";" " " cmd "${ARGN}")
    message(FATAL_ERROR "failed (${rc}): ${cmd}\n${out}\n${err}")
  endif()
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()

string(REGEX REPLACE "([][+.*()^$?|\\\\])" "\\\\\\1" prefix_re "${prefix}")
string(REGEX REPLACE "([][+.*()^$?|\\\\])" "\\\\\\1" libdir_re "${libdir}")

# ---- install -----------------------------------------------------------------
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
must(_ ${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${prefix}")

foreach(f "${INCLUDEDIR}/gpuopt/gpuopt.h" "${LIBDIR}/libgpuopt.so.${VERSION}"
          "${LIBDIR}/libgpuopt.a" "${BINDIR}/gpuopt" "${LIBDIR}/pkgconfig/gpuopt.pc"
          "${LIBDIR}/cmake/gpuopt/gpuoptConfig.cmake"
          "${LIBDIR}/cmake/gpuopt/gpuoptConfigVersion.cmake"
          "${LIBDIR}/cmake/gpuopt/gpuoptTargets.cmake"
          "${LIBDIR}/cmake/gpuopt/gpuoptStaticTargets.cmake"
          "share/man/man1/gpuopt.1" "share/man/man3/libgpuopt.3"
          "share/bash-completion/completions/gpuopt"
          # A prefix python3 does not search gets the Debian layout
          # (cmake/GpuoptInstallPython.cmake).
          "lib/python3/dist-packages/gpuopt/__init__.py"
          "lib/python3/dist-packages/gpuopt/_install.py"
          "lib/python3/dist-packages/gpuopt/torch.py"
          "lib/python3/dist-packages/gpuopt/py.typed")
  if(NOT EXISTS "${prefix}/${f}")
    problem("not installed: ${f}")
  endif()
endforeach()
foreach(link "libgpuopt.so" "libgpuopt.so.0")
  if(NOT IS_SYMLINK "${libdir}/${link}")
    problem("not installed as a symlink: ${LIBDIR}/${link}")
  endif()
endforeach()
file(GLOB installed_bins RELATIVE "${prefix}/${BINDIR}" "${prefix}/${BINDIR}/*")
if(NOT installed_bins STREQUAL "gpuopt")
  problem("${BINDIR}/ holds '${installed_bins}', expected only gpuopt (no test programs)")
endif()

# ---- pkg-config ----------------------------------------------------------------
# Only the installed prefix, plus the system directories for libcjson.
set(ENV{PKG_CONFIG_PATH} "${libdir}/pkgconfig")
must(pc_version ${PKG_CONFIG} --modversion gpuopt)
string(STRIP "${pc_version}" pc_version)
if(NOT pc_version STREQUAL VERSION)
  problem("pkg-config --modversion gpuopt says '${pc_version}', expected ${VERSION}")
endif()
must(pc_prefix ${PKG_CONFIG} --variable=prefix gpuopt)
string(STRIP "${pc_prefix}" pc_prefix)
if(NOT pc_prefix STREQUAL prefix)
  # Every flag below would point elsewhere: stop here with the cause.
  message(FATAL_ERROR "gpuopt.pc names prefix '${pc_prefix}', not the prefix installed to "
                      "(${prefix}): it must be written at install time")
endif()
must(pc_cflags ${PKG_CONFIG} --cflags gpuopt)
must(pc_libs ${PKG_CONFIG} --libs gpuopt)
must(pc_static_libs ${PKG_CONFIG} --static --libs gpuopt)
separate_arguments(pc_cflags UNIX_COMMAND "${pc_cflags}")
separate_arguments(pc_libs UNIX_COMMAND "${pc_libs}")
separate_arguments(pc_static_libs UNIX_COMMAND "${pc_static_libs}")
# gpuopt.h includes only standard headers: a consumer gets our include
# directory and nothing of the libraries we link privately (cJSON).
if(NOT pc_cflags STREQUAL "-I${prefix}/${INCLUDEDIR}")
  problem("pkg-config --cflags gpuopt gives '${pc_cflags}', expected -I${prefix}/${INCLUDEDIR}")
endif()
if(NOT pc_libs STREQUAL "-L${libdir};-lgpuopt")
  problem("pkg-config --libs gpuopt gives '${pc_libs}', expected -L${libdir} -lgpuopt")
endif()

set(src "${SOURCE_DIR}/consumer/consumer.c")
must(_ ${C_COMPILER} ${san_list} -std=c99 -Wall -Wextra -Werror ${pc_cflags} ${src}
     -o consumer-pkgconfig ${pc_libs} -ldl)
must(out ${CMAKE_COMMAND} -E env "LD_LIBRARY_PATH=${libdir}" ./consumer-pkgconfig)
if(NOT out MATCHES "libgpuopt ${VERSION} \\(built with ${VERSION}\\) from ${libdir_re}/libgpuopt\\.so\\.0\n")
  problem("the pkg-config consumer did not run on the installed library:\n${out}")
endif()
if(NOT out MATCHES "cpu:0 planned with [1-9][0-9]* knobs")
  problem("the pkg-config consumer made no plan:\n${out}")
endif()

# Static: the same flags, libgpuopt.a by name instead of -lgpuopt.
list(TRANSFORM pc_static_libs REPLACE "^-lgpuopt$" "-l:libgpuopt.a")
must(_ ${C_COMPILER} ${san_list} -std=c99 -Wall -Wextra -Werror ${pc_cflags} ${src}
     -o consumer-pkgconfig-static ${pc_static_libs} -ldl)
must(needed readelf -d consumer-pkgconfig-static)
if(needed MATCHES "libgpuopt")
  problem("consumer-pkgconfig-static still needs libgpuopt.so:\n${needed}")
endif()
must(out ./consumer-pkgconfig-static)
if(NOT out MATCHES "cpu:0 planned with [1-9][0-9]* knobs" OR out MATCHES "libgpuopt\\.so")
  problem("the static pkg-config consumer did not run on its own copy:\n${out}")
endif()
unset(ENV{PKG_CONFIG_PATH})

# ---- find_package(gpuopt CONFIG) -----------------------------------------------
function(configure_consumer dir result_var)
  execute_process(
    COMMAND ${CMAKE_COMMAND} -S "${SOURCE_DIR}/consumer" -B "${WORK_DIR}/${dir}"
            "-DCMAKE_PREFIX_PATH=${prefix}" "-DCMAKE_C_COMPILER=${C_COMPILER}"
            "-DCMAKE_C_FLAGS=${SAN_FLAGS}" -DCMAKE_BUILD_TYPE=RelWithDebInfo ${ARGN}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(${result_var} "${rc}" PARENT_SCOPE)
  set(${result_var}_output "${out}${err}" PARENT_SCOPE)
endfunction()

string(REGEX MATCH "^([0-9]+)\\.([0-9]+)" _ "${VERSION}")
set(major ${CMAKE_MATCH_1})
set(minor ${CMAKE_MATCH_2})
math(EXPR next_major "${major} + 1")
math(EXPR next_minor "${minor} + 1")

# gpuopt::gpuopt_static as the package's component, and as a target found
# without asking (cJSON is here); gpuopt::gpuopt where cJSON's package is not.
foreach(target gpuopt gpuopt_static gpuopt_static-component gpuopt-without-cjson)
  set(dir "cmake-${target}")
  set(extra "")
  if(target STREQUAL "gpuopt_static-component")
    set(extra "-DGPUOPT_COMPONENTS=static")
    set(target gpuopt_static)
  elseif(target STREQUAL "gpuopt-without-cjson")
    set(extra "-DCMAKE_DISABLE_FIND_PACKAGE_cJSON=ON")
    set(target gpuopt)
  endif()
  configure_consumer(${dir} rc "-DGPUOPT_TARGET=gpuopt::${target}"
                     "-DGPUOPT_FIND_VERSION=${major}.${minor}" ${extra})
  if(NOT rc STREQUAL "0")
    message(FATAL_ERROR "find_package(gpuopt ${major}.${minor} CONFIG) failed:\n${rc_output}")
  endif()
  if(NOT rc_output MATCHES "gpuopt ${VERSION} found in ${prefix_re}/")
    problem("find_package did not find the installed package:\n${rc_output}")
  endif()
  must(_ ${CMAKE_COMMAND} --build "${WORK_DIR}/${dir}")
  must(out "${WORK_DIR}/${dir}/consumer")
  if(NOT out MATCHES "cpu:0 planned with [1-9][0-9]* knobs")
    problem("the CMake consumer (gpuopt::${target}) made no plan:\n${out}")
  endif()
  if(target STREQUAL "gpuopt")
    # No LD_LIBRARY_PATH: the imported target's location reaches the build
    # tree's RPATH.
    if(NOT out MATCHES "from ${libdir_re}/libgpuopt\\.so\\.0\n")
      problem("the CMake consumer did not load the installed shared library:\n${out}")
    endif()
  else()
    must(needed readelf -d "${WORK_DIR}/${dir}/consumer")
    if(needed MATCHES "libgpuopt")
      problem("the gpuopt::gpuopt_static consumer still needs libgpuopt.so")
    endif()
  endif()
endforeach()

# Without cJSON's package, the static library is what is missing, and said so.
configure_consumer("cmake-static-without-cjson" rc "-DGPUOPT_TARGET=gpuopt::gpuopt_static"
                   "-DGPUOPT_COMPONENTS=static" "-DCMAKE_DISABLE_FIND_PACKAGE_cJSON=ON")
if(rc STREQUAL "0")
  problem("find_package(gpuopt COMPONENTS static) succeeded without cJSON's package")
elseif(NOT rc_output MATCHES "cJSON")
  problem("find_package(gpuopt COMPONENTS static) without cJSON failed without naming it:\n"
          "${rc_output}")
endif()

# ---- examples/ as a project of its own -----------------------------------------
execute_process(
  COMMAND ${CMAKE_COMMAND} -S "${EXAMPLES_DIR}" -B "${WORK_DIR}/examples"
          "-DCMAKE_PREFIX_PATH=${prefix}" "-DCMAKE_C_COMPILER=${C_COMPILER}"
          "-DCMAKE_C_FLAGS=${SAN_FLAGS}" "-DCMAKE_CXX_FLAGS=${SAN_FLAGS}"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc STREQUAL "0")
  problem("examples/ did not configure against the install:\n${out}${err}")
else()
  must(build_out ${CMAKE_COMMAND} --build "${WORK_DIR}/examples")
  if(build_out MATCHES "warning:")
    problem("examples/ built with warnings:\n${build_out}")
  endif()
  foreach(example list_devices list_devices_cpp)
    must(out "${WORK_DIR}/examples/${example}")
    if(NOT out MATCHES "^libgpuopt ${VERSION}\n" OR NOT out MATCHES "plan: level 1 requested")
      problem("examples/${example}, built against the install, printed:\n${out}")
    endif()
  endforeach()
endif()

# The version file: SameMinorVersion while the major is 0 (a 0.x minor
# release may break the API: CHANGELOG.md), so an older minor is refused too.
set(wrong_versions "${next_major}.0" "${major}.${next_minor}")
if(minor GREATER 0)
  math(EXPR prev_minor "${minor} - 1")
  list(APPEND wrong_versions "${major}.${prev_minor}")
endif()
foreach(wrong IN LISTS wrong_versions)
  configure_consumer("cmake-version-${wrong}" rc "-DGPUOPT_FIND_VERSION=${wrong}")
  if(rc STREQUAL "0")
    problem("find_package(gpuopt ${wrong} CONFIG) accepted version ${VERSION}")
  elseif(NOT rc_output MATCHES "gpuoptConfig\\.cmake, version: ${VERSION}")
    problem("find_package(gpuopt ${wrong}) failed, but not for the version:\n${rc_output}")
  endif()
endforeach()

# ---- the installed CLI and Python package -------------------------------------
must(out ${CMAKE_COMMAND} -E env "LD_LIBRARY_PATH=${libdir}" "${prefix}/${BINDIR}/gpuopt" version)
if(NOT out MATCHES "${VERSION}")
  problem("the installed 'gpuopt version' does not print ${VERSION}:\n${out}")
endif()

if(PYTHON)
  set(preload "")
  if(PYTHON_PRELOAD)
    set(preload "LD_PRELOAD=${PYTHON_PRELOAD}" "ASAN_OPTIONS=detect_leaks=0")
  endif()
  # No GPUOPT_LIBRARY: the package finds the library installed beside it.
  # (No ';' in the code: CMake would split the argument there.)
  must(out ${CMAKE_COMMAND} -E env --unset=GPUOPT_LIBRARY
       "PYTHONPATH=${prefix}/lib/python3/dist-packages"
       PYTHONDONTWRITEBYTECODE=1 ${preload} ${PYTHON} -c
       "import gpuopt\nprint(gpuopt.library_path())\nprint(gpuopt.version())\nprint(gpuopt.Context(backends='cpu').select('cpu').id)")
  if(NOT out STREQUAL "${libdir}/libgpuopt.so.0\n${VERSION}\ncpu:0\n")
    problem("the installed Python package did not load the library beside it:\n${out}")
  endif()
endif()

if(problems)
  message(FATAL_ERROR "packaging:${problems}")
endif()
message(STATUS "packaging: installed to ${prefix}; pkg-config (shared, static), "
               "find_package (gpuopt::gpuopt with and without cJSON, gpuopt::gpuopt_static), "
               "the version file, examples/ standalone, the CLI and the Python package work")
