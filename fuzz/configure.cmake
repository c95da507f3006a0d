# Writes the two files CMake generates for the program (the built-in layer tables and
# version.hpp) into OUT, in CMake's script mode: no compiler, no CUDA toolkit needed.
#   cmake -DSRC=<repository> -DOUT=<dir> -P fuzz/configure.cmake
file(READ ${SRC}/CMakeLists.txt _top)
string(REGEX MATCH "project\\(convstudy VERSION ([0-9.]+)" _m "${_top}")
set(PROJECT_VERSION ${CMAKE_MATCH_1})
execute_process(COMMAND git describe --always --dirty --abbrev=12 WORKING_DIRECTORY ${SRC}
                OUTPUT_VARIABLE CS_GIT_REV OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT CS_GIT_REV)
  set(CS_GIT_REV "unknown")
endif()
include(${SRC}/core/builtin_tables.cmake)
cs_write_builtin_tables(${SRC} ${OUT}/builtin_table.cpp)
configure_file(${SRC}/core/version.hpp.in ${OUT}/version.hpp @ONLY)
