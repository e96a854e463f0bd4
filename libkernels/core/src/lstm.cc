// UNIDIRECTIONAL_SEQUENCE_LSTM: scratch size, variant table, entry (the step is LstmRun in
// lstm_internal.h).
#include "lstm_internal.h"
#include "mica/kernels/lstm.h"
#include "variants_internal.h"

namespace mica {
namespace kernels {

size_t LstmScratchBytes(const LstmParams& p, Isa /*isa*/) {
  if (p.batch < 1 || p.state_size < 1) return 0;
  const size_t rows = p.time_major ? static_cast<size_t>(p.batch) : 1;
  return 3 * rows * static_cast<size_t>(p.state_size) * sizeof(int16_t);
}

KernelStatus Lstm(const LstmParams& p, const int8_t* input, int8_t* hidden_state,
                  int16_t* cell_state, int8_t* output, Scratch scratch) {
  return internal::MICA_KERNELS_BEST(Lstm)(p, input, hidden_state, cell_state, output, scratch);
}

VariantList<LstmFn> LstmVariants() {
  static constexpr Variant<LstmFn> kVariants[] = {
      MICA_KERNELS_VARIANT_SCALAR(internal::LstmScalar)
      MICA_KERNELS_VARIANT_DSP(internal::LstmDsp)
      MICA_KERNELS_VARIANT_MVE(internal::LstmMve)};
  return MICA_KERNELS_VARIANT_LIST(kVariants);
}

}  // namespace kernels
}  // namespace mica
