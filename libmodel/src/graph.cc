#include "mica/model/graph.h"

#include <utility>

namespace mica {

ConstData Graph::AddConstData(std::vector<uint8_t> bytes) {
  auto owned = std::make_shared<const std::vector<uint8_t>>(std::move(bytes));
  // A zero-length constant still needs a non-null pointer to count as constant.
  static const uint8_t kEmpty = 0;
  ConstData view{owned->empty() ? &kEmpty : owned->data(), owned->size()};
  storage.push_back(std::move(owned));
  return view;
}

}  // namespace mica
