cmake_policy(VERSION 3.25)
# The C program in README.md ("Using the library from C") as a reader would
# use it: extracted as it stands, compiled with -std=c11 -Wall -Wextra
# -Wpedantic -Werror (and as C99) against the tree's header, linked against
# the built library, and run.
# -D arguments: README, INCLUDE_DIR, LIBRARY (the built libgpuopt.so),
# C_COMPILER, WORK_DIR, SAN_FLAGS (may be empty).
file(READ "${README}" text)
string(FIND "${text}" "## Using the library from C" at)
if(at LESS 0)
  message(FATAL_ERROR "${README} has no 'Using the library from C' section")
endif()
string(SUBSTRING "${text}" ${at} -1 text)
if(NOT text MATCHES "```c\n(.*)")
  message(FATAL_ERROR "no ```c block in the section")
endif()
set(rest "${CMAKE_MATCH_1}")
string(FIND "${rest}" "\n```" end)
string(SUBSTRING "${rest}" 0 ${end} program)
file(MAKE_DIRECTORY "${WORK_DIR}")
file(WRITE "${WORK_DIR}/readme_example.c" "${program}\n")

separate_arguments(san UNIX_COMMAND "${SAN_FLAGS}")
get_filename_component(libdir "${LIBRARY}" DIRECTORY)
foreach(std c11 c99)
  execute_process(COMMAND "${C_COMPILER}" -std=${std} -Wall -Wextra -Wpedantic -Werror ${san}
                          -I "${INCLUDE_DIR}" "${WORK_DIR}/readme_example.c"
                          -o "${WORK_DIR}/readme_example_${std}" "${LIBRARY}" "-Wl,-rpath,${libdir}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc STREQUAL "0")
    message(FATAL_ERROR "README.md's C example does not compile clean as ${std}:\n${out}${err}\n"
                        "--- the program ---\n${program}")
  endif()
endforeach()
execute_process(COMMAND "${WORK_DIR}/readme_example_c11" RESULT_VARIABLE rc
                OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc STREQUAL "0" OR NOT out MATCHES "^[a-z_.]+ = [^ ]+ \\(.+\\)\n$")
  message(FATAL_ERROR "README.md's C example ran with status ${rc}:\n${out}${err}")
endif()
message(STATUS "README.md's C example compiles clean (C11, C99) and prints: ${out}")
