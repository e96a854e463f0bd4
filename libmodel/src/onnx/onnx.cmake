# ONNX reader: Debian's libonnx-dev ships the generated ModelProto classes in `onnx_proto`
# (namespace `onnx`, header <onnx/onnx_pb.h>). Linked PRIVATE: no protobuf type reaches a
# public mica header.
target_link_libraries(mica_model PRIVATE onnx_proto protobuf::libprotobuf)
