# chime_library(NAME SRCS ... [DEPS ...] [PUBLIC_DEPS ...])
#   A static library target `chime_<NAME>` (alias chime::<NAME>), with the project's include roots.
# chime_test(NAME [NO_MAIN] SRCS ... [DEPS ...] [COST N])
#   A GoogleTest binary registered with CTest; gtest_main is linked unless NO_MAIN. COST N (for
#   every test of the binary) makes `ctest -j` start them before cheaper ones.
include_guard(GLOBAL)

function(chime_library name)
  cmake_parse_arguments(ARG "" "" "SRCS;DEPS;PUBLIC_DEPS" ${ARGN})
  set(target chime_${name})
  add_library(${target} STATIC ${ARG_SRCS})
  add_library(chime::${name} ALIAS ${target})
  target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR})
  target_link_libraries(${target} PUBLIC ${ARG_PUBLIC_DEPS} PRIVATE ${ARG_DEPS})
endfunction()

function(chime_test name)
  cmake_parse_arguments(ARG "NO_MAIN" "COST" "SRCS;DEPS" ${ARGN})
  if(NOT CHIME_BUILD_TESTS)
    return()
  endif()
  add_executable(${name} ${ARG_SRCS})
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gmock)
  if(NOT ARG_NO_MAIN)
    target_link_libraries(${name} PRIVATE GTest::gtest_main)
  endif()
  # COST orders `ctest -j` before it has timings of its own (a clean checkout): a binary
  # whose tests are long starts first.
  if(NOT ARG_COST)
    set(ARG_COST 0)
  endif()
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 300 COST ${ARG_COST})
endfunction()
