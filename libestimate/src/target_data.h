// The built-in target profiles' text, generated into target_data.cc at configure time.
#ifndef MICA_ESTIMATE_SRC_TARGET_DATA_H_
#define MICA_ESTIMATE_SRC_TARGET_DATA_H_

namespace mica {
namespace estimate {

struct BuiltinTargetText {
  const char* name;    // "ethos-u55-256"
  const char* origin;  // "libestimate/targets/ethos-u55-256.textproto"
  const char* text;    // protobuf text format (target.proto's TargetProfile)
};

extern const BuiltinTargetText kBuiltinTargets[];
extern const int kNumBuiltinTargets;

}  // namespace estimate
}  // namespace mica

#endif  // MICA_ESTIMATE_SRC_TARGET_DATA_H_
