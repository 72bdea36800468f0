# Installs the Python package (bindings/python/gpuopt) where the prefix's
# python3 looks, at install time: the prefix is only known then
# (`cmake --install build --prefix DIR`, `make install PREFIX=DIR`).
#
# The directory is the first entry of that interpreter's sys.path that lies
# under the prefix and ends in site-packages or dist-packages: for Debian's
# /usr/bin/python3, /usr/local/lib/python3.11/dist-packages under /usr/local
# and /usr/lib/python3/dist-packages under /usr. A prefix python3 does not
# search (/opt/gpuopt) gets <prefix>/lib/python3/dist-packages, and the
# install says to put it on PYTHONPATH.
#
# Beside the package goes _install.py, the path from the package to the
# library installed with it, so that `import gpuopt` loads that copy.
# file(INSTALL) records every file in install_manifest.txt, so `make
# uninstall` removes them.
#
# Set by the install(CODE) that includes this file: GPO_PYTHON (may be
# empty), GPO_PACKAGE_SOURCE (bindings/python/gpuopt), GPO_STAGING (a build
# directory), GPO_LIBDIR (relative), GPO_SONAME (libgpuopt.so.0).

set(gpo_pydir "")
if(GPO_PYTHON)
  execute_process(COMMAND "${GPO_PYTHON}" -c "import sys; print('\\n'.join(sys.path))"
                  OUTPUT_VARIABLE gpo_paths RESULT_VARIABLE gpo_rc
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(gpo_rc STREQUAL "0")
    string(REPLACE "\n" ";" gpo_paths "${gpo_paths}")
    string(REGEX REPLACE "([][+.*()^$?|\\\\])" "\\\\\\1" gpo_prefix_re "${CMAKE_INSTALL_PREFIX}")
    foreach(p IN LISTS gpo_paths)
      if(p MATCHES "^${gpo_prefix_re}/(.+-packages)$")
        set(gpo_pydir "${CMAKE_MATCH_1}")
        break()
      endif()
    endforeach()
  endif()
endif()
set(gpo_searched TRUE)
if(NOT gpo_pydir)
  set(gpo_pydir "lib/python3/dist-packages")
  set(gpo_searched FALSE)
endif()
set(gpo_dest "${CMAKE_INSTALL_PREFIX}/${gpo_pydir}")

file(RELATIVE_PATH gpo_rel "${gpo_dest}/gpuopt" "${CMAKE_INSTALL_PREFIX}/${GPO_LIBDIR}/${GPO_SONAME}")
file(MAKE_DIRECTORY "${GPO_STAGING}")
file(WRITE "${GPO_STAGING}/_install.py"
     "\"\"\"Written by make install: where the library installed with this package is.\"\"\"\n"
     "LIBRARY = \"${gpo_rel}\"  # relative to this package's directory\n")

file(INSTALL DESTINATION "${gpo_dest}" TYPE DIRECTORY FILES "${GPO_PACKAGE_SOURCE}"
     FILES_MATCHING PATTERN "*.py" PATTERN "py.typed" PATTERN "__pycache__" EXCLUDE)
file(INSTALL DESTINATION "${gpo_dest}/gpuopt" TYPE FILE FILES "${GPO_STAGING}/_install.py")

if(gpo_searched)
  message(STATUS "Python package: ${gpo_dest}/gpuopt (on ${GPO_PYTHON}'s sys.path)")
else()
  message(STATUS "Python package: ${gpo_dest}/gpuopt; python3 does not search there: "
                 "export PYTHONPATH=${gpo_dest}")
endif()
