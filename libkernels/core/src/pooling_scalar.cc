// Scalar bodies of max / average pooling, and the shared argument check.
#include "pooling_internal.h"

namespace mica {
namespace kernels {
namespace internal {

bool ValidPoolParams(const PoolParams& p, int32_t lo, int32_t hi) {
  const Dims& in = p.input;
  const Dims& out = p.output;
  if (in.n < 0 || in.h < 0 || in.w < 0 || in.c < 0 || out.n != in.n || out.c != in.c ||
      out.h < 0 || out.w < 0 || p.filter_h < 1 || p.filter_w < 1 || p.stride.h < 1 ||
      p.stride.w < 1 || p.padding.h < 0 || p.padding.w < 0 ||
      p.activation.min > p.activation.max || p.activation.min < lo || p.activation.max > hi) {
    return false;
  }
  // Every window must overlap the image (TFLite's average pool fails on empty windows).
  for (int32_t oy = 0; oy < out.h; ++oy) {
    const int32_t y0 = oy * p.stride.h - p.padding.h;
    if (y0 + p.filter_h <= 0 || y0 >= in.h) return false;
  }
  for (int32_t ox = 0; ox < out.w; ++ox) {
    const int32_t x0 = ox * p.stride.w - p.padding.w;
    if (x0 + p.filter_w <= 0 || x0 >= in.w) return false;
  }
  return true;
}

namespace {

template <typename T, bool kMax>
void PoolT(const PoolParams& p, const T* input, T* output) {
  const int32_t depth = p.input.c, in_w = p.input.w;
  ForEachPoolWindow(p, input, output, [&](const T* image, PoolWindow w, T* o) {
    const int32_t count = w.count();
    for (int32_t c = 0; c < depth; ++c) {
      int32_t acc = kMax ? -65536 : 0;
      for (int32_t fy = w.fy0; fy < w.fy1; ++fy) {
        const T* row = PoolRow(image, w, fy, in_w, depth);
        for (int32_t fx = w.fx0; fx < w.fx1; ++fx) {
          const int32_t v = row[static_cast<int64_t>(fx) * depth + c];
          if (kMax) {
            acc = v > acc ? v : acc;
          } else {
            acc += v;
          }
        }
      }
      if (!kMax) {
        acc = acc > 0 ? (acc + count / 2) / count : (acc - count / 2) / count;
      }
      o[c] = static_cast<T>(Clamp(acc, p.activation.min, p.activation.max));
    }
  });
}

// Max pool with channels innermost: the output row is the running maximum (a max of int8 /
// int16 values fits the type), initialised by the first tap (every window has one:
// ValidPoolParams), the other taps walked in order, then the activation clamp.
template <typename T>
void MaxPoolChannelsInner(const PoolParams& p, const T* input, T* output) {
  const int32_t depth = p.input.c, in_w = p.input.w;
  ForEachPoolWindow(p, input, output, [&](const T* image, PoolWindow w, T* o) {
    const T* row = PoolRow(image, w, w.fy0, in_w, depth);
    const T* first = row + static_cast<int64_t>(w.fx0) * depth;
    for (int32_t c = 0; c < depth; ++c) o[c] = first[c];
    int32_t fy = w.fy0, fx = w.fx0 + 1;
    for (;;) {
      if (fx == w.fx1) {
        if (++fy == w.fy1) break;
        row = PoolRow(image, w, fy, in_w, depth);
        fx = w.fx0;
      }
      const T* px = row + static_cast<int64_t>(fx) * depth;
      for (T* m = o; m != o + depth; ++m, ++px) *m = *px > *m ? *px : *m;
      ++fx;
    }
    for (int32_t c = 0; c < depth; ++c) {
      o[c] = static_cast<T>(Clamp(o[c], p.activation.min, p.activation.max));
    }
  });
}

template <typename T, bool kMax>
KernelStatus PoolChecked(const PoolParams& p, const T* input, T* output, int32_t lo,
                         int32_t hi) {
  bool empty = false;
  const KernelStatus st = CheckPool(p, input, output, lo, hi, &empty);
  if (st != KernelStatus::kOk || empty) return st;
  if (kMax) {
    MaxPoolChannelsInner(p, input, output);
  } else {
    PoolT<T, false>(p, input, output);
  }
  return KernelStatus::kOk;
}

}  // namespace

KernelStatus MaxPoolScalar(const PoolParams& p, const int8_t* in, int8_t* out) {
  return PoolChecked<int8_t, true>(p, in, out, -128, 127);
}
KernelStatus MaxPool16Scalar(const PoolParams& p, const int16_t* in, int16_t* out) {
  return PoolChecked<int16_t, true>(p, in, out, -32768, 32767);
}
KernelStatus AvgPoolScalar(const PoolParams& p, const int8_t* in, int8_t* out) {
  return PoolChecked<int8_t, false>(p, in, out, -128, 127);
}
KernelStatus AvgPool16Scalar(const PoolParams& p, const int16_t* in, int16_t* out) {
  return PoolChecked<int16_t, false>(p, in, out, -32768, 32767);
}

}  // namespace internal
}  // namespace kernels
}  // namespace mica
