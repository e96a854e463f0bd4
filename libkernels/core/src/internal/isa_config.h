// Maps the compiler's ACLE feature macros to mica's, once.
//
// On Arm targets the best variant is chosen at compile time from these; on the host every
// body that has a portable emulation is compiled and selected at run time (variants.h).
#ifndef MICA_KERNELS_INTERNAL_ISA_CONFIG_H_
#define MICA_KERNELS_INTERNAL_ISA_CONFIG_H_

#if defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1)
#define MICA_KERNELS_HAVE_MVE 1
#else
#define MICA_KERNELS_HAVE_MVE 0
#endif

#if defined(__ARM_FEATURE_DSP) && __ARM_FEATURE_DSP
#define MICA_KERNELS_HAVE_DSP 1
#else
#define MICA_KERNELS_HAVE_DSP 0
#endif

#if defined(__arm__) || defined(__thumb__)
#define MICA_KERNELS_TARGET_ARM 1
#else
#define MICA_KERNELS_TARGET_ARM 0
#endif

// The host compiles the DSP bodies against portable emulations of the SIMD32 intrinsics, so
// they are tested bit-exactly on x86 too.
#if MICA_KERNELS_HAVE_DSP || !MICA_KERNELS_TARGET_ARM
#define MICA_KERNELS_BUILD_DSP 1
#else
#define MICA_KERNELS_BUILD_DSP 0
#endif

#define MICA_KERNELS_BUILD_MVE MICA_KERNELS_HAVE_MVE

#endif  // MICA_KERNELS_INTERNAL_ISA_CONFIG_H_
