// TFLite's SAME / VALID padding rule (mica/kernels/padding.h), checked against hand-worked
// cases of TFLite's ComputePaddingHeightWidth.
#include "mica/kernels/padding.h"

#include "testing/catch.h"

namespace mica {
namespace kernels {
namespace {

TEST_CASE("PaddedOutputSize follows TFLite's SAME and VALID rules", "[padding]") {
  CHECK(PaddedOutputSize(true, 49, 10, 2, 1) == 25);
  CHECK(PaddedOutputSize(true, 10, 4, 2, 1) == 5);
  CHECK(PaddedOutputSize(false, 49, 10, 2, 1) == 20);  // floor(39 / 2) + 1
  CHECK(PaddedOutputSize(false, 10, 4, 2, 1) == 4);
  CHECK(PaddedOutputSize(false, 7, 3, 1, 2) == 3);  // effective window 5
  CHECK(PaddedOutputSize(false, 7, 3, 1, 3) == 1);  // effective window 7
  CHECK(PaddedOutputSize(false, 7, 3, 1, 4) == 0);  // does not fit
  CHECK(PaddedOutputSize(true, 96, 3, 2, 1) == 48);
  CHECK(PaddedOutputSize(true, 5, 3, 2, 1) == 3);
  CHECK(PaddedOutputSize(true, 5, 3, 0, 1) == 0);  // bad stride
  // No int32 overflow in the effective window.
  CHECK(PaddedOutputSize(false, 2000000000, 1000000, 1, 3000) == 0);
  static_assert(PaddedOutputSize(true, 32, 3, 1, 1) == 32, "constexpr");
}

TEST_CASE("PaddingBefore / PaddingAfter split SAME's total, the odd one after", "[padding]") {
  // in 5, k 3, stride 2 -> out 3, total (3-1)*2 + 3 - 5 = 2: 1 before, 1 after.
  CHECK(PaddingBefore(true, 5, 3, 2, 1, 3) == 1);
  CHECK(PaddingAfter(true, 5, 3, 2, 1, 3) == 1);
  // in 96, k 3, stride 2 -> out 48, total 47*2 + 3 - 96 = 1: 0 before, 1 after.
  CHECK(PaddingBefore(true, 96, 3, 2, 1, 48) == 0);
  CHECK(PaddingAfter(true, 96, 3, 2, 1, 48) == 1);
  // in 10, k 4, dilation 2 (effective 7), stride 1 -> out 10, total 6: 3 and 3.
  CHECK(PaddingBefore(true, 10, 4, 1, 2, 10) == 3);
  CHECK(PaddingAfter(true, 10, 4, 1, 2, 10) == 3);
  // A window smaller than the stride needs none.
  CHECK(PaddingBefore(true, 8, 1, 2, 1, 4) == 0);
  CHECK(PaddingAfter(true, 8, 1, 2, 1, 4) == 0);
  // VALID never pads.
  CHECK(PaddingBefore(false, 5, 3, 2, 1, 3) == 0);
  CHECK(PaddingAfter(false, 10, 4, 1, 2, 4) == 0);
}

}  // namespace
}  // namespace kernels
}  // namespace mica
