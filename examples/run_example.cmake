cmake_policy(VERSION 3.25)
# Runs one example (-DCOMMAND=program;args...) and checks what it prints:
# exit status 0, nothing on stderr (the library is silent by default), the
# library version (-DVERSION), a device list with exactly one selected
# device and the CPU among them, and a level-1 plan whose every knob line
# carries a tier and a source. With -DEXPECT=REGEX (the tuning examples),
# a line that matches REGEX instead of the version, devices and plan.
include(${CMAKE_CURRENT_LIST_DIR}/run_common.cmake)

if(DEFINED EXPECT)
  if(NOT out MATCHES "${EXPECT}")
    string(APPEND problems "\n  - no line matches '${EXPECT}'")
  endif()
else()
  string(REPLACE "." "\\." version_re "${VERSION}")
  if(NOT out MATCHES "^libgpuopt ${version_re}\n")
    string(APPEND problems "\n  - the first line is not 'libgpuopt ${VERSION}'")
  endif()
  if(NOT out MATCHES "\n[0-9]+ device\\(s\\):\n")
    string(APPEND problems "\n  - no 'N device(s):' line")
  endif()
  string(REGEX MATCHALL "\n\\* [a-z]+:[0-9]+ " selected "${out}")
  list(LENGTH selected n_selected)
  if(NOT n_selected EQUAL 1)
    string(APPEND problems "\n  - ${n_selected} devices marked selected ('* '), expected 1")
  endif()
  if(NOT out MATCHES "\n[ *] cpu:0 +cpu ")
    string(APPEND problems "\n  - cpu:0 is not listed as a cpu")
  endif()

  if(out MATCHES "\nplan: level 1 requested, level [0-2] applied, ([0-9]+) knob\\(s\\)\n")
    set(n_knobs ${CMAKE_MATCH_1})
    # Reasons may hold ';', which would split the match list: count without.
    string(REPLACE ";" "," flat "${out}")
    string(REGEX MATCHALL "\n  [A-Za-z0-9_.]+ += [^\n]* tier -?[0-2], [a-z]+: [^\n]+" lines "${flat}")
    list(LENGTH lines n_lines)
    if(n_knobs EQUAL 0 OR NOT n_lines EQUAL n_knobs)
      string(APPEND problems
             "\n  - ${n_lines} well-formed knob lines, the plan says ${n_knobs} (expected > 0)")
    endif()
  else()
    string(APPEND problems "\n  - no 'plan: level 1 requested, level N applied, K knob(s)' line")
  endif()
endif()

if(problems)
  message(FATAL_ERROR "${COMMAND}:${problems}")
endif()
