# ONNX reader: Debian's libonnx-dev ships the generated ModelProto classes in `onnx_proto`
# (namespace `onnx`, header <onnx/onnx_pb.h>). Linked PRIVATE: no protobuf type reaches a
# public mica header.
target_link_libraries(mica_model PRIVATE onnx_proto protobuf::libprotobuf)

# The model and CLI tests build ModelProtos in-test with the protobuf API, so they need the
# ONNX headers too. test/ is configured after libmodel: link once the whole project is read.
function(mica_onnx_link_tests)
  foreach(t IN ITEMS mica_model_test mica_cli_test)
    if(TARGET ${t})
      target_link_libraries(${t} PRIVATE onnx_proto protobuf::libprotobuf)
    endif()
  endforeach()
endfunction()
cmake_language(DEFER DIRECTORY ${PROJECT_SOURCE_DIR} CALL mica_onnx_link_tests)
