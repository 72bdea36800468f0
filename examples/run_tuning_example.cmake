cmake_policy(VERSION 3.25)
# Runs one tuning example (-DCOMMAND=program;args...) and checks it: exit
# status 0, nothing on stderr (the library is silent by default), and a line
# that matches -DEXPECT (its best point, or why there is nothing to tune).
execute_process(COMMAND ${COMMAND} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}")
set(problems "")
if(NOT rc STREQUAL "0")
  string(APPEND problems "\n  - exit status ${rc}, expected 0")
endif()
if(NOT err STREQUAL "")
  string(APPEND problems "\n  - stderr is not empty:\n${err}")
endif()
if(NOT out MATCHES "${EXPECT}")
  string(APPEND problems "\n  - no line matches '${EXPECT}'")
endif()
if(problems)
  message(FATAL_ERROR "${COMMAND}:${problems}")
endif()
