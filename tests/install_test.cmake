# ctest `install_prefix`: installs the build into a fresh PREFIX and runs the installed
# program (its --version names it, and `list` works from there with no source tree).
if(NOT BUILD_DIR OR NOT PREFIX)
  message(FATAL_ERROR "usage: cmake -DBUILD_DIR=<build> -DPREFIX=<dir> -P install_test.cmake")
endif()
file(REMOVE_RECURSE "${PREFIX}")
execute_process(COMMAND ${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${PREFIX}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install failed (${rc}):\n${out}${err}")
endif()
foreach(f bin/convstudy share/convstudy/layers/alexnet.json)
  if(NOT EXISTS "${PREFIX}/${f}")
    message(FATAL_ERROR "cmake --install did not install ${f}")
  endif()
endforeach()
# Run from an empty directory, with the prefix's bin first on PATH: the installed copy runs.
file(MAKE_DIRECTORY "${PREFIX}/cwd")
execute_process(COMMAND ${CMAKE_COMMAND} -E env "PATH=${PREFIX}/bin:$ENV{PATH}" convstudy --version
                WORKING_DIRECTORY "${PREFIX}/cwd" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "^convstudy [0-9]+\\.[0-9]+\\.[0-9]+ \\(")
  message(FATAL_ERROR "installed convstudy --version: exit ${rc}, output '${out}${err}'")
endif()
execute_process(COMMAND "${PREFIX}/bin/convstudy" list --table "${PREFIX}/share/convstudy/layers/alexnet.json"
                WORKING_DIRECTORY "${PREFIX}/cwd" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "conv5")
  message(FATAL_ERROR "installed convstudy list: exit ${rc}, output '${out}${err}'")
endif()
message(STATUS "installed and ran: ${out}")
file(REMOVE_RECURSE "${PREFIX}")
