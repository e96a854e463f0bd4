#include <iostream>

#include "mica/model/tensor.h"

int main() {
  mica::Tensor t;
  t.dtype = mica::DType::kInt8;
  t.shape = {1, 49, 10, 1};
  std::cout << mica::DTypeName(t.dtype) << " " << t.num_bytes() << "\n";
  return t.num_bytes() == 490 ? 0 : 1;
}
