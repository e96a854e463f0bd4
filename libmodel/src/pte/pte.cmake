# ExecuTorch reader: flatc generates the C++ accessors for mica's own schema subsets of the
# program (pte_schema.fbs) and bundled-program (bpte_schema.fbs) formats into the build tree.
# Like the TFLite ones, the generated headers stay PRIVATE to mica_model.
set(mica_pte_gen_dir ${CMAKE_CURRENT_BINARY_DIR}/pte_gen)
set(mica_pte_gen_headers ${mica_pte_gen_dir}/pte_schema_generated.h
                         ${mica_pte_gen_dir}/bpte_schema_generated.h)
add_custom_command(
  OUTPUT ${mica_pte_gen_headers}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${mica_pte_gen_dir}
  COMMAND flatbuffers::flatc --cpp -o ${mica_pte_gen_dir}
          ${CMAKE_CURRENT_LIST_DIR}/pte_schema.fbs ${CMAKE_CURRENT_LIST_DIR}/bpte_schema.fbs
  DEPENDS ${CMAKE_CURRENT_LIST_DIR}/pte_schema.fbs ${CMAKE_CURRENT_LIST_DIR}/bpte_schema.fbs
          flatbuffers::flatc
  COMMENT "flatc: generating ExecuTorch program schema accessors"
  VERBATIM)
add_custom_target(mica_pte_schema_gen DEPENDS ${mica_pte_gen_headers})
add_dependencies(mica_model mica_pte_schema_gen)
target_include_directories(mica_model PRIVATE ${mica_pte_gen_dir})
