# TFLite reader/writer: flatc generates the C++ accessors for mica's own schema subset
# (tflite_schema.fbs) into the build tree. The generated header and flatbuffers stay PRIVATE:
# no flatbuffers type reaches a public mica header.
set(mica_tflite_fbs ${CMAKE_CURRENT_LIST_DIR}/tflite_schema.fbs)
set(mica_tflite_gen_dir ${CMAKE_CURRENT_BINARY_DIR}/tflite_gen)
set(mica_tflite_gen_header ${mica_tflite_gen_dir}/tflite_schema_generated.h)
add_custom_command(
  OUTPUT ${mica_tflite_gen_header}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${mica_tflite_gen_dir}
  COMMAND flatbuffers::flatc --cpp -o ${mica_tflite_gen_dir} ${mica_tflite_fbs}
  DEPENDS ${mica_tflite_fbs} flatbuffers::flatc
  COMMENT "flatc: generating TFLite schema accessors"
  VERBATIM)
add_custom_target(mica_tflite_schema_gen DEPENDS ${mica_tflite_gen_header})
add_dependencies(mica_model mica_tflite_schema_gen)
target_include_directories(mica_model PRIVATE ${mica_tflite_gen_dir})
target_link_libraries(mica_model PRIVATE flatbuffers::flatbuffers)

# Tests that hand-craft hostile flatbuffers use the same generated accessors. This interface
# target is build-tree only (never installed or exported).
add_library(mica_tflite_schema INTERFACE)
target_include_directories(mica_tflite_schema INTERFACE ${mica_tflite_gen_dir})
target_link_libraries(mica_tflite_schema INTERFACE flatbuffers::flatbuffers)
add_dependencies(mica_tflite_schema mica_tflite_schema_gen)

# The model test executable is defined later (test/); link the schema target into it once the
# top-level directory has been processed.
function(mica_tflite_link_schema_into_tests)
  foreach(t IN ITEMS mica_model_test)
    if(TARGET ${t})
      target_link_libraries(${t} PRIVATE mica_tflite_schema)
    endif()
  endforeach()
endfunction()
cmake_language(DEFER DIRECTORY ${PROJECT_SOURCE_DIR} CALL mica_tflite_link_schema_into_tests)
