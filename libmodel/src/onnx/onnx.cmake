# ONNX reader: Debian's libonnx-dev ships the generated ModelProto classes in `onnx_proto`
# (namespace `onnx`, header <onnx/onnx_pb.h>). Linked PRIVATE: no protobuf type reaches a
# public mica header.
target_link_libraries(mica_model PRIVATE onnx_proto protobuf::libprotobuf)

# The model tests build ModelProtos in-test with the protobuf API, so they need the ONNX
# headers too. test/ is configured after libmodel: link once the whole project is read.
function(mica_onnx_link_tests)
  if(TARGET mica_model_test)
    target_link_libraries(mica_model_test PRIVATE onnx_proto protobuf::libprotobuf)
  endif()
endfunction()
cmake_language(DEFER DIRECTORY ${PROJECT_SOURCE_DIR} CALL mica_onnx_link_tests)
