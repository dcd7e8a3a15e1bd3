# libFuzzer targets built with clang++ beside the g++ main build.
#
# g++ has no libFuzzer, so when a clang++ that can link -fsanitize=fuzzer exists, a fuzzer is
# compiled with clang++ directly (one custom command per source, so Ninja builds them in
# parallel) from the same sources as the library it tests, and a ctest runs it from a seed corpus.
# New inputs go to a corpus in the build tree; the committed seeds are only read. Line tables
# only (-g1): a crash report needs file:line, and full -g cost about 9 % more compile time.

# Sets DDPSIM_CAN_FUZZ: DDPSIM_FUZZ is on (the top-level option), clang++ found and it links
# -fsanitize=fuzzer (a cached probe).
function(ddpsim_probe_libfuzzer)
  find_program(DDPSIM_CLANGXX NAMES clang++ clang++-16 clang++-15 clang++-14)
  if(DDPSIM_CLANGXX AND NOT DEFINED CACHE{DDPSIM_CLANGXX_HAS_LIBFUZZER})
    set(_probe_dir ${CMAKE_BINARY_DIR}/fuzz_probe)
    file(WRITE ${_probe_dir}/probe.cpp
      "#include <cstddef>\n#include <cstdint>\n"
      "extern \"C\" int LLVMFuzzerTestOneInput(const std::uint8_t*, std::size_t) { return 0; }\n")
    execute_process(
      COMMAND ${DDPSIM_CLANGXX} -fsanitize=fuzzer,address,undefined probe.cpp -o probe
      WORKING_DIRECTORY ${_probe_dir} RESULT_VARIABLE _probe_rc OUTPUT_QUIET ERROR_QUIET)
    if(_probe_rc EQUAL 0)
      set(DDPSIM_CLANGXX_HAS_LIBFUZZER ON CACHE INTERNAL "clang++ links -fsanitize=fuzzer")
    else()
      set(DDPSIM_CLANGXX_HAS_LIBFUZZER OFF CACHE INTERNAL "clang++ links -fsanitize=fuzzer")
    endif()
  endif()
  if(DDPSIM_FUZZ AND DDPSIM_CLANGXX AND DDPSIM_CLANGXX_HAS_LIBFUZZER)
    set(DDPSIM_CAN_FUZZ ON PARENT_SCOPE)
  else()
    set(DDPSIM_CAN_FUZZ OFF PARENT_SCOPE)
  endif()
endfunction()

# ddpsim_add_fuzzer(NAME SOURCES files... [INCLUDES dirs...] [PACKAGES targets...]
#                   [DEFINES d...] [LINK flags...] DICT file CORPUS dir LABELS labels [SECONDS s])
# Builds fuzzer NAME from SOURCES (the library's sources plus the target), adds the ctest NAME
# that fuzzes for SECONDS (default 10) from CORPUS with DICT. INCLUDES: our include directories
# besides traces/'s; PACKAGES: imported targets (found in the caller's directory) whose include
# directories the sources need besides nlohmann-json's. Only their headers are used: what they
# compile must come in SOURCES or LINK, as these commands bypass CMake's usage requirements.
function(ddpsim_add_fuzzer name)
  cmake_parse_arguments(F "" "DICT;CORPUS;SECONDS" "SOURCES;INCLUDES;PACKAGES;DEFINES;LINK;LABELS"
                        ${ARGN})
  if(NOT F_SECONDS)
    set(F_SECONDS 10)
  endif()
  # Objects are shared by the fuzzers of one directory compiled alike (the trace library's
  # sources serve the reader's and the importer's): one folder per set of flags, one rule per
  # object.
  string(MD5 _flags_key "${F_DEFINES};${F_INCLUDES};${F_PACKAGES}")
  string(SUBSTRING ${_flags_key} 0 8 _flags_key)
  set(_fuzz_dir ${CMAKE_CURRENT_BINARY_DIR}/fuzz_objects_${_flags_key})
  set(_fuzz_bin ${CMAKE_CURRENT_BINARY_DIR}/fuzz/${name})
  set(_sanitizers -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined)
  set(_includes)
  foreach(_dir IN LISTS F_INCLUDES)
    list(APPEND _includes -I${_dir})
  endforeach()
  # The packages' include directories, unless default ones (an explicit -isystem /usr/include
  # would break the C++ headers' #include_next).
  foreach(_package IN LISTS F_PACKAGES ITEMS nlohmann_json::nlohmann_json)
    get_target_property(_package_dirs ${_package} INTERFACE_INCLUDE_DIRECTORIES)
    foreach(_dir IN LISTS _package_dirs)
      if(_dir AND NOT _dir IN_LIST CMAKE_CXX_IMPLICIT_INCLUDE_DIRECTORIES
         AND NOT _dir STREQUAL "/usr/include")
        list(APPEND _includes -isystem ${_dir})
      endif()
    endforeach()
  endforeach()
  set(_defines)
  foreach(_define IN LISTS F_DEFINES)
    list(APPEND _defines -D${_define})
  endforeach()
  set(_objects)
  foreach(_source IN LISTS F_SOURCES)
    get_filename_component(_name ${_source} NAME_WE)
    set(_object ${_fuzz_dir}/${_name}.o)
    list(APPEND _objects ${_object})
    get_property(_made DIRECTORY PROPERTY DDPSIM_FUZZ_OBJECTS)
    if(_object IN_LIST _made)
      continue()
    endif()
    set_property(DIRECTORY APPEND PROPERTY DDPSIM_FUZZ_OBJECTS ${_object})
    add_custom_command(
      OUTPUT ${_object}
      COMMAND ${DDPSIM_CLANGXX} -std=c++17 -O1 -g1 -fno-omit-frame-pointer ${_sanitizers}
              -Wall -Wextra -Werror ${_defines}
              -I${PROJECT_SOURCE_DIR}/traces/include -I${PROJECT_SOURCE_DIR}/traces/src
              ${_includes}
              -MD -MF ${_object}.d -c ${_source} -o ${_object}
      DEPENDS ${_source}
      DEPFILE ${_object}.d
      COMMENT "clang++ (libFuzzer) ${_name}.cpp"
      COMMAND_EXPAND_LISTS VERBATIM)
  endforeach()
  add_custom_command(
    OUTPUT ${_fuzz_bin}
    COMMAND ${DDPSIM_CLANGXX} -fsanitize=fuzzer,address,undefined ${_objects} ${F_LINK} -o ${_fuzz_bin}
    DEPENDS ${_objects}
    COMMENT "Linking ${name}"
    COMMAND_EXPAND_LISTS VERBATIM)
  add_custom_target(${name} ALL DEPENDS ${_fuzz_bin})

  set(_work_corpus ${CMAKE_CURRENT_BINARY_DIR}/${name}_corpus)
  file(MAKE_DIRECTORY ${_work_corpus})
  add_test(NAME ${name}
    COMMAND ${_fuzz_bin} -max_total_time=${F_SECONDS} -timeout=10 -rss_limit_mb=2048
            -dict=${F_DICT} -artifact_prefix=${CMAKE_CURRENT_BINARY_DIR}/${name}-
            ${_work_corpus} ${F_CORPUS})
  math(EXPR _timeout "${F_SECONDS} + 50")
  set_tests_properties(${name} PROPERTIES TIMEOUT ${_timeout} LABELS "${F_LABELS}")
endfunction()
