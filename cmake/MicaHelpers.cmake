# mica_cc_library / mica_cc_test / mica_cc_bench: one call per target.
#
#   mica_cc_library(NAME model
#                   SRCS src/graph.cc ...        # or GLOB_SRCS src (recursive *.cc)
#                   DEPS absl::status ...        # PUBLIC link deps
#                   PRIVATE_DEPS ...)
# creates `mica_<name>` with alias `mica::<name>`, PUBLIC include/ and PRIVATE src/.
include_guard(GLOBAL)

set(MICA_WARNINGS -Wall -Wextra -Wshadow -Wno-unused-parameter)

function(mica_apply_flags target)
  target_compile_features(${target} PUBLIC cxx_std_17)
  target_compile_options(${target} PRIVATE ${MICA_WARNINGS})
  if(MICA_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

function(mica_cc_library)
  cmake_parse_arguments(M "" "NAME;DIR" "SRCS;GLOB_SRCS;DEPS;PRIVATE_DEPS" ${ARGN})
  if(NOT M_DIR)
    set(M_DIR ${CMAKE_CURRENT_SOURCE_DIR})
  endif()
  set(srcs ${M_SRCS})
  foreach(g IN LISTS M_GLOB_SRCS)
    file(GLOB_RECURSE found CONFIGURE_DEPENDS ${M_DIR}/${g}/*.cc)
    list(APPEND srcs ${found})
  endforeach()
  set(t mica_${M_NAME})
  add_library(${t} STATIC ${srcs})
  add_library(mica::${M_NAME} ALIAS ${t})
  # Position-independent code for the host libraries only: bare-metal Cortex-M images are linked
  # at fixed addresses, and -fPIC there costs the kernels a register and GOT loads.
  if(MICA_HOST_TOOLS)
    set(pic ON)
  else()
    set(pic OFF)
  endif()
  set_target_properties(${t} PROPERTIES EXPORT_NAME ${M_NAME} OUTPUT_NAME mica_${M_NAME}
                                        POSITION_INDEPENDENT_CODE ${pic})
  target_include_directories(${t}
    PUBLIC $<BUILD_INTERFACE:${M_DIR}/include> $<INSTALL_INTERFACE:include>
    PRIVATE ${M_DIR}/src ${CMAKE_CURRENT_BINARY_DIR})
  target_link_libraries(${t} PUBLIC ${M_DEPS} PRIVATE ${M_PRIVATE_DEPS})
  mica_apply_flags(${t})
  set_property(GLOBAL APPEND PROPERTY MICA_LIBRARIES ${t})
  if(MICA_HOST_TOOLS)
    install(DIRECTORY ${M_DIR}/include/ DESTINATION include)
  endif()
endfunction()

#   mica_cc_test(NAME model_test GLOB_SRCS model DEPS mica::model LABELS unit)
# builds one Catch2 executable and registers its test cases with ctest.
function(mica_cc_test)
  cmake_parse_arguments(M "" "NAME" "SRCS;GLOB_SRCS;DEPS;LABELS" ${ARGN})
  set(srcs ${M_SRCS})
  foreach(g IN LISTS M_GLOB_SRCS)
    file(GLOB_RECURSE found CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/${g}/*.cc)
    list(APPEND srcs ${found})
  endforeach()
  add_executable(${M_NAME} ${srcs})
  target_link_libraries(${M_NAME} PRIVATE mica_testing ${M_DEPS})
  target_include_directories(${M_NAME} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  mica_apply_flags(${M_NAME})
  target_compile_options(${M_NAME} PRIVATE ${MICA_TEST_CXX_FLAGS})
  if(NOT M_LABELS)
    set(M_LABELS unit)
  endif()
  catch_discover_tests(${M_NAME}
    PROPERTIES LABELS "${M_LABELS}"
               ENVIRONMENT "MICA_SHARED_DIR=${MICA_SHARED_DIR}")
  # Only one variable: catch_discover_tests splits a list-valued property's ';'. The source
  # and build folders reach the tests as compile definitions of mica_testing instead.
endfunction()

#   mica_cc_bench(NAME kernels_bench GLOB_SRCS kernels DEPS mica::kernels)
function(mica_cc_bench)
  cmake_parse_arguments(M "" "NAME" "SRCS;GLOB_SRCS;DEPS" ${ARGN})
  set(srcs ${M_SRCS})
  foreach(g IN LISTS M_GLOB_SRCS)
    file(GLOB_RECURSE found CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/${g}/*.cc)
    list(APPEND srcs ${found})
  endforeach()
  add_executable(${M_NAME} ${srcs})
  target_link_libraries(${M_NAME} PRIVATE benchmark::benchmark_main ${M_DEPS})
  target_include_directories(${M_NAME} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  mica_apply_flags(${M_NAME})
  target_compile_options(${M_NAME} PRIVATE ${MICA_TEST_CXX_FLAGS})
endfunction()
