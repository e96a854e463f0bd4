// Field-level mutation of a parsed protobuf message through reflection, for the
// structure-aware fuzz targets (fuzz_onnx mutates a ModelProto): one random path down the
// message tree to one field, which gets a boundary, nearby or random value, or one element of
// a repeated field is added, removed or changed.
#ifndef MICA_TEST_FUZZ_PROTO_MUTATOR_H_
#define MICA_TEST_FUZZ_PROTO_MUTATOR_H_

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

namespace mica {
namespace fuzz {

inline int64_t PickInt64(std::mt19937_64& rng, int64_t current) {
  static const int64_t kSpecial[] = {0,  1,  2,  3,  -1, 4,  7,  8,  13, 16, 255, 256, 1 << 20,
                                     int64_t{1} << 31, (int64_t{1} << 31) - 1, int64_t{1} << 40,
                                     std::numeric_limits<int64_t>::max(),
                                     std::numeric_limits<int64_t>::min()};
  switch (rng() % 4) {
    case 0: return kSpecial[rng() % (sizeof(kSpecial) / sizeof(kSpecial[0]))];
    case 1: return static_cast<int64_t>(static_cast<uint64_t>(current) + rng() % 5 - 2);
    case 2: return static_cast<int64_t>(static_cast<uint64_t>(current) * 2);
    default: return static_cast<int64_t>(rng());
  }
}

inline double PickDouble(std::mt19937_64& rng, double current) {
  static const double kSpecial[] = {0.0, -0.0, 1.0, -1.0, 0.5, 1e-300, 1e300, 1e-45, 3.5e38,
                                    std::numeric_limits<double>::infinity(),
                                    std::numeric_limits<double>::quiet_NaN()};
  switch (rng() % 3) {
    case 0: return kSpecial[rng() % (sizeof(kSpecial) / sizeof(kSpecial[0]))];
    case 1: return current * 2;
    default: return current + static_cast<double>(static_cast<int>(rng() % 21) - 10);
  }
}

inline std::string PickString(std::mt19937_64& rng, const std::string& current) {
  static const char* const kSpecial[] = {"", "x", "Relu", "Conv", "If", "Loop", "ai.onnx",
                                         "com.microsoft", "\xff\xfe", "\x1b[31m"};
  switch (rng() % 3) {
    case 0: return kSpecial[rng() % (sizeof(kSpecial) / sizeof(kSpecial[0]))];
    case 1: return current.size() < 4096 ? current + current : current.substr(1);
    default: {
      std::string s = current;
      if (!s.empty()) s[rng() % s.size()] = static_cast<char>(rng());
      return s;
    }
  }
}

// Sets a singular scalar field, or element `i` of a repeated one (i < 0: appends).
inline void SetScalar(google::protobuf::Message* m, const google::protobuf::FieldDescriptor* f,
                      int i, std::mt19937_64& rng) {
  using FD = google::protobuf::FieldDescriptor;
  const google::protobuf::Reflection* r = m->GetReflection();
  const bool rep = f->is_repeated();
  const bool add = rep && i < 0;
  switch (f->cpp_type()) {
    case FD::CPPTYPE_INT32: {
      const int64_t cur = add ? 0 : rep ? r->GetRepeatedInt32(*m, f, i) : r->GetInt32(*m, f);
      const int32_t v = static_cast<int32_t>(PickInt64(rng, cur));
      add ? r->AddInt32(m, f, v) : rep ? r->SetRepeatedInt32(m, f, i, v) : r->SetInt32(m, f, v);
      break;
    }
    case FD::CPPTYPE_INT64: {
      const int64_t cur = add ? 0 : rep ? r->GetRepeatedInt64(*m, f, i) : r->GetInt64(*m, f);
      const int64_t v = PickInt64(rng, cur);
      add ? r->AddInt64(m, f, v) : rep ? r->SetRepeatedInt64(m, f, i, v) : r->SetInt64(m, f, v);
      break;
    }
    case FD::CPPTYPE_UINT32: {
      const uint32_t v = static_cast<uint32_t>(PickInt64(rng, 0));
      add ? r->AddUInt32(m, f, v) : rep ? r->SetRepeatedUInt32(m, f, i, v) : r->SetUInt32(m, f, v);
      break;
    }
    case FD::CPPTYPE_UINT64: {
      const uint64_t v = static_cast<uint64_t>(PickInt64(rng, 0));
      add ? r->AddUInt64(m, f, v) : rep ? r->SetRepeatedUInt64(m, f, i, v) : r->SetUInt64(m, f, v);
      break;
    }
    case FD::CPPTYPE_FLOAT: {
      const double cur = add ? 0 : rep ? r->GetRepeatedFloat(*m, f, i) : r->GetFloat(*m, f);
      const double d = PickDouble(rng, cur);  // out of float range: infinity, not UB
      const float v = d > 3.4e38 ? std::numeric_limits<float>::infinity()
                      : d < -3.4e38 ? -std::numeric_limits<float>::infinity()
                                    : static_cast<float>(d);
      add ? r->AddFloat(m, f, v) : rep ? r->SetRepeatedFloat(m, f, i, v) : r->SetFloat(m, f, v);
      break;
    }
    case FD::CPPTYPE_DOUBLE: {
      const double cur = add ? 0 : rep ? r->GetRepeatedDouble(*m, f, i) : r->GetDouble(*m, f);
      const double v = PickDouble(rng, cur);
      add ? r->AddDouble(m, f, v) : rep ? r->SetRepeatedDouble(m, f, i, v) : r->SetDouble(m, f, v);
      break;
    }
    case FD::CPPTYPE_BOOL: {
      const bool v = rng() % 2;
      add ? r->AddBool(m, f, v) : rep ? r->SetRepeatedBool(m, f, i, v) : r->SetBool(m, f, v);
      break;
    }
    case FD::CPPTYPE_ENUM: {
      const google::protobuf::EnumDescriptor* e = f->enum_type();
      const int v = rng() % 4 == 0 ? static_cast<int>(PickInt64(rng, 0) % 64)
                                   : e->value(static_cast<int>(rng() % e->value_count()))->number();
      if (e->FindValueByNumber(v) == nullptr) break;  // proto2 enums are closed
      add ? r->AddEnumValue(m, f, v)
          : rep ? r->SetRepeatedEnumValue(m, f, i, v) : r->SetEnumValue(m, f, v);
      break;
    }
    case FD::CPPTYPE_STRING: {
      const std::string cur = add ? std::string() : rep ? r->GetRepeatedString(*m, f, i)
                                                        : r->GetString(*m, f);
      const std::string v = PickString(rng, cur);
      add ? r->AddString(m, f, v) : rep ? r->SetRepeatedString(m, f, i, v) : r->SetString(m, f, v);
      break;
    }
    default: break;
  }
}

// Mutates one field somewhere under `m` (at most `depth` levels down).
inline void MutateProto(google::protobuf::Message* m, std::mt19937_64& rng, int depth = 12) {
  const google::protobuf::Descriptor* d = m->GetDescriptor();
  const google::protobuf::Reflection* r = m->GetReflection();
  if (d->field_count() == 0) return;
  // Prefer descending into sub-messages that are present.
  std::vector<const google::protobuf::FieldDescriptor*> present;
  r->ListFields(*m, &present);
  std::vector<const google::protobuf::FieldDescriptor*> msgs;
  for (const auto* f : present) {
    if (f->cpp_type() == google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE) msgs.push_back(f);
  }
  if (depth > 0 && !msgs.empty() && rng() % 4 != 0) {
    const auto* f = msgs[rng() % msgs.size()];
    if (f->is_repeated()) {
      const int n = r->FieldSize(*m, f);
      if (rng() % 16 == 0 && n > 0) {
        // Duplicate or drop an element.
        if (rng() % 2) {
          r->AddMessage(m, f)->CopyFrom(r->GetRepeatedMessage(*m, f, static_cast<int>(rng() % n)));
        } else {
          r->SwapElements(m, f, static_cast<int>(rng() % n), n - 1);
          r->RemoveLast(m, f);
        }
        return;
      }
      if (n > 0) MutateProto(r->MutableRepeatedMessage(m, f, static_cast<int>(rng() % n)), rng, depth - 1);
    } else {
      MutateProto(r->MutableMessage(m, f), rng, depth - 1);
    }
    return;
  }
  const google::protobuf::FieldDescriptor* f = d->field(static_cast<int>(rng() % d->field_count()));
  if (f->cpp_type() == google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE) {
    if (f->is_repeated()) {
      if (depth > 0) MutateProto(r->AddMessage(m, f), rng, depth - 1);
    } else if (rng() % 3 == 0) {
      r->ClearField(m, f);
    } else if (depth > 0) {
      MutateProto(r->MutableMessage(m, f), rng, depth - 1);
    }
    return;
  }
  if (f->is_repeated()) {
    const int n = r->FieldSize(*m, f);
    const unsigned what = rng() % 4;
    if (what == 0 || n == 0) {
      SetScalar(m, f, -1, rng);
    } else if (what == 1) {
      r->RemoveLast(m, f);
    } else {
      SetScalar(m, f, static_cast<int>(rng() % n), rng);
    }
  } else if (rng() % 8 == 0) {
    r->ClearField(m, f);
  } else {
    SetScalar(m, f, 0, rng);
  }
}

}  // namespace fuzz
}  // namespace mica

#endif  // MICA_TEST_FUZZ_PROTO_MUTATOR_H_
