// Helpers to define an op's variant table (see mica/kernels/variants.h).
//
// In xxx.cc, with XxxScalar/XxxDsp/XxxMve declared in xxx_internal.h:
//
//   VariantList<XxxFn> XxxVariants() {
//     static constexpr Variant<XxxFn> kVariants[] = {
//         MICA_KERNELS_VARIANT_SCALAR(internal::XxxScalar)
//         MICA_KERNELS_VARIANT_DSP(internal::XxxDsp)    // omit for ops without a DSP body
//         MICA_KERNELS_VARIANT_MVE(internal::XxxMve)};  // omit for ops without an MVE body
//     return MICA_KERNELS_VARIANT_LIST(kVariants);
//   }
//
// A body that is not compiled in this build expands to nothing, so its symbol need not exist.
// MICA_KERNELS_BEST(Xxx) names the body the public entry point calls (compile-time choice);
// ops lacking a DSP or MVE body use MICA_KERNELS_BEST_OF(...) below with what they have.
#ifndef MICA_KERNELS_VARIANTS_INTERNAL_H_
#define MICA_KERNELS_VARIANTS_INTERNAL_H_

#include "internal/isa_config.h"
#include "mica/kernels/variants.h"

#define MICA_KERNELS_VARIANT_SCALAR(fn) {"scalar", ::mica::kernels::Isa::kScalar, &fn},

#if MICA_KERNELS_BUILD_DSP
#define MICA_KERNELS_VARIANT_DSP(fn) {"dsp", ::mica::kernels::Isa::kDsp, &fn},
#else
#define MICA_KERNELS_VARIANT_DSP(fn)
#endif

#if MICA_KERNELS_BUILD_MVE
#define MICA_KERNELS_VARIANT_MVE(fn) {"mve", ::mica::kernels::Isa::kMve, &fn},
#else
#define MICA_KERNELS_VARIANT_MVE(fn)
#endif

#define MICA_KERNELS_VARIANT_LIST(table) \
  { (table), sizeof(table) / sizeof((table)[0]) }

// The body a public entry point calls on this build: MVE on Helium targets, DSP on Armv7E-M /
// Armv8-M mainline with DSP, scalar elsewhere (including the host, where DSP is emulated).
#if MICA_KERNELS_HAVE_MVE
#define MICA_KERNELS_BEST(op) op##Mve
#elif MICA_KERNELS_HAVE_DSP
#define MICA_KERNELS_BEST(op) op##Dsp
#else
#define MICA_KERNELS_BEST(op) op##Scalar
#endif

// For ops that have a DSP body but no MVE body: DSP on any target with DSP, else scalar.
#if MICA_KERNELS_HAVE_DSP
#define MICA_KERNELS_BEST_DSP(op) op##Dsp
#else
#define MICA_KERNELS_BEST_DSP(op) op##Scalar
#endif

#endif  // MICA_KERNELS_VARIANTS_INTERNAL_H_
