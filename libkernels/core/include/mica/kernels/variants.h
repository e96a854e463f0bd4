// mica kernels — the run-time list of compiled variants of an op, for tests, benchmarks and
// the runtime's `--variant` switch.
//
// Every op `Xxx` declares, next to its public entry point in its own header:
//
//   using XxxFn = KernelStatus (*)(<exactly the parameters of Xxx()>);
//   VariantList<XxxFn> XxxVariants();     // every variant compiled in and runnable here
//
// and defines XxxVariants() in its xxx.cc with the MICA_KERNELS_VARIANT_* helpers of
// src/variants_internal.h. On the host the list holds scalar and dsp (portable SIMD32
// emulations); on a Cortex-M build, what the CPU's feature macros allow (mve on M55/M85).
// The public entry Xxx() does not use the list: it calls the best variant directly.
//
//   for (const auto& v : mica::kernels::ConvVariants()) {
//     CAPTURE(v.name);
//     REQUIRE(v.fn(params, quant, in, filter, bias, out, scratch) == KernelStatus::kOk);
//   }
//   auto fn = mica::kernels::FindVariant(mica::kernels::ConvVariants(), Isa::kDsp);  // or null
#ifndef MICA_KERNELS_VARIANTS_H_
#define MICA_KERNELS_VARIANTS_H_

#include <cstddef>

#include "mica/kernels/types.h"

namespace mica {
namespace kernels {

// One compiled body of an op.
template <typename Fn>
struct Variant {
  const char* name;  // "scalar", "dsp", "mve" (IsaName(isa))
  Isa isa;
  Fn fn;
};

// A view of a static table of variants, best last. Iterable with range-for.
template <typename Fn>
struct VariantList {
  const Variant<Fn>* items = nullptr;
  size_t count = 0;

  const Variant<Fn>* begin() const { return items; }
  const Variant<Fn>* end() const { return items + count; }
  size_t size() const { return count; }
  const Variant<Fn>& operator[](size_t i) const { return items[i]; }
};

// Returns the body of `isa` in `list`, or nullptr when that variant is not compiled in.
template <typename Fn>
Fn FindVariant(const VariantList<Fn>& list, Isa isa) {
  for (const auto& v : list) {
    if (v.isa == isa) return v.fn;
  }
  return nullptr;
}

}  // namespace kernels
}  // namespace mica

#endif  // MICA_KERNELS_VARIANTS_H_
