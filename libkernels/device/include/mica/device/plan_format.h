// mica device plans (.mplan): the binary layout shared by the plan compiler (host,
// libkernels/runtime) and the device runtime (mica/device/runtime.h).
//
// A plan is everything TFLite computes at prepare time, resolved on the host: per operator the
// kernel-core entry (op code: the variant is the best body the firmware's ISA has), its
// parameter struct (shapes, offsets, activation range, fixed-point multipliers), per-channel
// multiplier/shift arrays, scratch size, and the arena offset of every activation tensor from
// the planner; plus the constant data, 16-byte aligned.
//
// Format (version 1, little-endian, every offset relative to the start of the plan, which must
// be 16-byte aligned in memory): a PlanHeader, a table of TensorRecord, a table of OpRecord,
// the graph's input and output tensor ids (uint32 each), then the data section (parameter
// structs, per-op lists, constant tensors). `crc32` (IEEE 802.3, as zlib) covers bytes
// [16, total_bytes). Every record is bounds-checked by VerifyPlan before anything runs.
//
// Why not a flatbuffer: the project's FlatBuffers C++ runtime needs the C++ standard library's
// containers and its verifier allocates nothing but still pulls <string>/<vector> headers,
// which the freestanding rank-0 rule of the kernel core forbids; fixed-size records with
// explicit bounds checks and a CRC give the same guarantees in ~300 lines without it.
#ifndef MICA_DEVICE_PLAN_FORMAT_H_
#define MICA_DEVICE_PLAN_FORMAT_H_

#include <cstddef>
#include <cstdint>

#include "mica/kernels/activations.h"
#include "mica/kernels/data_movement.h"
#include "mica/kernels/elementwise.h"
#include "mica/kernels/lstm.h"
#include "mica/kernels/quantize.h"
#include "mica/kernels/reduce.h"
#include "mica/kernels/softmax.h"
#include "mica/kernels/svdf.h"
#include "mica/kernels/types.h"

namespace mica {
namespace device {

constexpr uint32_t kPlanMagic = 0x4E4C504Du;  // "MPLN"
constexpr uint16_t kPlanVersion = 1;
constexpr uint32_t kPlanAlign = 16;

struct PlanHeader {
  uint32_t magic;
  uint16_t version;
  uint16_t header_bytes;  // sizeof(PlanHeader)
  uint32_t total_bytes;
  uint32_t crc32;         // of bytes [16, total_bytes)
  uint8_t isa;            // kernels::Isa the plan's variants and scratch were sized for
  uint8_t reserved0[3];
  uint32_t arena_bytes;   // activations + scratch + state: what the caller must provide
  uint32_t scratch_offset;
  uint32_t scratch_bytes;
  uint32_t num_tensors;
  uint32_t tensors_offset;
  uint32_t num_ops;
  uint32_t ops_offset;
  uint32_t num_inputs;
  uint32_t num_outputs;
  uint32_t io_offset;     // num_inputs + num_outputs uint32 tensor ids
  uint32_t data_offset;
  uint32_t data_bytes;
  uint32_t activation_bytes;  // the planner's arena (first part of the arena)
  uint32_t state_bytes;
  uint32_t reserved1[3];
};
static_assert(sizeof(PlanHeader) == 88, "PlanHeader layout");

enum class TensorLoc : uint8_t {
  kNone = 0,   // not used by any operator
  kArena = 1,  // offset into the caller's arena
  kConst = 2,  // offset into the plan
  kState = 3,  // offset into the arena; filled with `fill` before every run
};

// Element types (mica's DType order is not relied on: the plan has its own codes).
enum class PlanDType : uint8_t {
  kInt8 = 0, kUInt8 = 1, kInt16 = 2, kInt32 = 3, kInt64 = 4, kFloat32 = 5, kBool = 6,
  kOther = 7,
};

struct TensorRecord {
  uint8_t loc;    // TensorLoc
  uint8_t dtype;  // PlanDType
  int8_t fill;    // kState: byte value written before every run
  uint8_t reserved;
  uint32_t offset;
  uint32_t bytes;
  uint32_t elements;
};
static_assert(sizeof(TensorRecord) == 16, "TensorRecord layout");

// Kernel-core entries a plan can call. Numbers are part of the format: append only.
enum class PlanOp : uint16_t {
  kConv = 1,             // ConvParams; t: in, filter, bias|-1, out; a: mult, shift
  kConv16x8 = 2,         // ConvParams; t: in, filter, out; a: mult, shift, bias64|empty
  kDepthwiseConv = 3,
  kDepthwiseConv16x8 = 4,
  kFullyConnected = 5,   // FullyConnectedParams; as kConv
  kFullyConnected16x8 = 6,
  kTransposeConv = 7,    // TransposeConvParams; as kConv
  kMaxPool = 8,          // PoolParams; t: in, out
  kAvgPool = 9,
  kMaxPool16 = 10,
  kAvgPool16 = 11,
  kSoftmax = 12,         // SoftmaxOpParams; t: in, out
  kAdd = 13,             // BinaryOpParams<AddParams>; t: a, b, out
  kSub = 14,
  kAdd16 = 15,
  kSub16 = 16,
  kCopy = 17,            // CopyOpParams; t: in, out (reshape, squeeze, expand dims)
  kLstm = 18,            // LstmOpParams; t: in, hidden (state), cell (state), out, then per
                         // gate (forget, input, cell, output): input W, recurrent W, bias|-1
  kMul = 19,             // MulOpParams; t: a, b, out
  kMul16 = 20,
  kMinimum = 21,         // MinMaxOpParams; t: a, b, out
  kMaximum = 22,
  kMinimum16 = 23,
  kMaximum16 = 24,
  kQuantize = 25,        // AffineOpParams; t: in (float32), out (int8 or int16)
  kDequantize = 26,      // AffineOpParams; t: in (int8 or int16), out (float32)
  kRequantize = 27,      // RequantizeOpParams; t: in, out (the pair from their dtypes)
  kPad = 28,             // PadOpParams; t: in, out
  kSvdf = 29,            // kernels::SvdfParams; t: in, weights_feature, weights_time (int16),
                         // bias|-1, state (int16), out
  kSvdfInt8State = 30,   // as kSvdf with int8 time weights and state
  kSoftmaxInt8ToInt16 = 31,  // SoftmaxOpParams; t: in (int8), out (int16)
  kSoftmax16 = 32,       // Softmax16OpParams; t: in, out; a: exp LUT, 1/(1+x) LUT (int16 x 513)
  kMean = 33,            // ReduceOpParams; t: in, out
  kMean16 = 34,
  kSum = 35,
  kSum16 = 36,
  kReduceMax = 37,
  kReduceMax16 = 38,
  // Unary activations: UnaryOpParams<kernel params>; t: in, out (same dtype).
  kLogistic = 39,        // kernels::LogisticParams, int8
  kTanh = 40,            // kernels::TanhParams, int8
  kLogistic16 = 41,      // kernels::Logistic16Params, int16
  kTanh16 = 42,          // kernels::Tanh16Params, int16
  kRelu = 43,            // kernels::ReluParams, int8
  kRelu16 = 44,
  kClamp = 45,           // kernels::ActivationRange, int8
  kClamp16 = 46,
  kLeakyRelu = 47,       // kernels::LeakyReluParams, int8
  kLeakyRelu16 = 48,
  kHardSwish = 49,       // kernels::HardSwishParams, int8 (padding bytes zero)
  kSquaredDifference = 50,    // BinaryOpParams; t: a, b, out
  kSquaredDifference16 = 51,
  kPrelu = 52,           // PreluOpParams; t: in, alpha, out (int8)
  kConcatenation = 53,   // ConcatOpParams; t: inputs..., out; a: the inputs' kernels::Shape
  kTranspose = 54,       // TransposeOpParams; t: in, out
  kStridedSlice = 55,    // StridedSliceOpParams; t: in, out (SLICE and STRIDED_SLICE, resolved)
  kSplit = 56,           // SplitOpParams; t: in, outputs...; a: int32 size of each output along
                         // the axis (SPLIT, SPLIT_V, UNPACK)
  kCount
};

// Parameter blocks of the ops whose kernel-core call takes more than one params struct. The
// kernel-core params structs themselves (ConvParams, PoolParams, ...) are stored as they are:
// they hold only int32 (and one bool) fields, so their layout is the same on the host and on
// Armv7-M/Armv8-M; VerifyPlan checks each block's size.
struct SoftmaxOpParams {
  kernels::SoftmaxParams p;
  int32_t rows;
  int32_t depth;
};
struct BinaryOpParams {
  kernels::AddParams p;
  kernels::Shape a, b, out;
};
struct CopyOpParams {
  uint32_t bytes;
};
// kernels::LstmParams without its weight pointers (those are tensor operands).
struct LstmOpParams {
  int32_t batch, time_steps, input_size, state_size;
  int32_t time_major;  // 0 / 1
  int32_t input_zero_point, hidden_zero_point;
  kernels::Requant gate_input_fc[4], gate_recurrent_fc[4];  // forget, input, cell, output
  int32_t cell_gate_sigmoid;  // 0 / 1
  kernels::Requant forget_cell_mul, input_cell_mul, hidden_mul;
  int32_t cell_state_scale_power;
  int32_t cell_clip_enabled;  // 0 / 1
  int32_t quantized_cell_clip;
};

struct MulOpParams {
  kernels::MulParams p;
  kernels::Shape a, b, out;
};
struct MinMaxOpParams {
  kernels::Shape a, b, out;
};
// QUANTIZE (float32 -> int8/int16) and DEQUANTIZE, per tensor, over `count` elements.
struct AffineOpParams {
  kernels::AffineQuant q;
  int32_t count;
};
struct RequantizeOpParams {
  kernels::RequantizeParams p;
  int32_t count;
};
// PAD / PADV2 with a constant value: `value` holds one element (element_bytes 1, 2 or 4).
struct PadOpParams {
  kernels::PadParams p;
  kernels::Shape in;
  uint32_t element_bytes;
  uint8_t value[4];
};
struct Softmax16OpParams {
  int32_t input_multiplier;
  int32_t input_left_shift;
  int32_t rows;
  int32_t depth;
};

struct ReduceOpParams {
  kernels::MeanParams p;  // unused by REDUCE_MAX
  kernels::Shape in;
  kernels::ReduceAxes axes;
};
template <typename P>
struct UnaryOpParams {
  P p;
  int32_t count;
};

struct PreluOpParams {
  kernels::PreluParams p;
  kernels::Shape in, alpha;
};
// CONCATENATION / PACK of `num_inputs` (1 to 16) tensors of `element_bytes` (1, 2 or 4) along `axis`.
struct ConcatOpParams {
  int32_t axis;
  int32_t num_inputs;
  uint32_t element_bytes;
  kernels::Shape out;
};
struct TransposeOpParams {
  kernels::Shape in;
  int32_t perm[kernels::kMaxRank];
  uint32_t element_bytes;
};

struct StridedSliceOpParams {
  kernels::StridedSliceParams p;
  kernels::Shape in, out;
  uint32_t element_bytes;
};

// SPLIT / SPLIT_V / UNPACK into `num_outputs` (1 to 16) tensors along `axis`.
struct SplitOpParams {
  int32_t axis;
  int32_t num_outputs;
  uint32_t element_bytes;
  kernels::Shape in;
};

// Names as the host executor reports them (for per-operator counters).
const char* PlanOpName(uint16_t code);

struct OpRecord {
  uint16_t code;         // PlanOp
  uint16_t num_tensors;  // tensor ids (int32, -1 = absent) at list_offset
  uint16_t num_arrays;   // then num_arrays {offset, bytes} pairs (uint32) into the plan
  uint16_t reserved;
  uint32_t params_offset;
  uint32_t params_bytes;
  uint32_t list_offset;
  uint32_t model_op;     // operator index in the model's subgraph
  uint32_t scratch_bytes;
  uint32_t reserved1;
};
static_assert(sizeof(OpRecord) == 32, "OpRecord layout");

// CRC-32 (IEEE, reflected, as zlib's crc32) of `n` bytes, continuing `crc` (start with 0).
uint32_t Crc32(const uint8_t* data, size_t n, uint32_t crc = 0);

}  // namespace device
}  // namespace mica

#endif  // MICA_DEVICE_PLAN_FORMAT_H_
