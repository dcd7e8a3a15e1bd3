# cmake -DROOT=<simulator dir> -P simgrid_only_in_engine.cmake
# The layering of simulator/src (docs/model.md, "How replay works"): a file includes SimGrid
# (<simgrid/...> or <xbt/...>) if and only if it lives in src/engine/. The public headers and
# the CLI include none.
file(GLOB_RECURSE _files RELATIVE "${ROOT}"
  "${ROOT}/src/*.cpp" "${ROOT}/src/*.hpp" "${ROOT}/include/*.hpp" "${ROOT}/cli/*.cpp" "${ROOT}/cli/*.hpp")
set(_bad "")
foreach(_f IN LISTS _files)
  file(STRINGS "${ROOT}/${_f}" _hits REGEX "^[ \t]*#[ \t]*include[ \t]*<(simgrid|xbt)/")
  if(_f MATCHES "^src/engine/")
    if(NOT _hits)
      string(APPEND _bad "  ${_f}: in engine/ but includes no SimGrid header (move it out)\n")
    endif()
  elseif(_hits)
    string(APPEND _bad "  ${_f}: includes SimGrid outside src/engine/\n")
  endif()
endforeach()
if(_bad)
  message(FATAL_ERROR "simulator layering broken:\n${_bad}")
endif()
list(LENGTH _files _n)
message(STATUS "${_n} simulator files: SimGrid only in src/engine/")
