# What every example's test checks first (included by run_example.cmake and
# run_profile_example.cmake): runs ${COMMAND}, prints what it printed, and
# starts `problems` with an exit status other than 0 and anything on stderr
# (the library is silent by default). Leaves the output in `out`.
execute_process(COMMAND ${COMMAND} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}")

set(problems "")
if(NOT rc STREQUAL "0")
  string(APPEND problems "\n  - exit status ${rc}, expected 0")
endif()
if(NOT err STREQUAL "")
  string(APPEND problems "\n  - stderr is not empty:\n${err}")
endif()
