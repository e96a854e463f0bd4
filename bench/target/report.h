// Output of the variant-check image (coverage.cc, variants.cc): one line per result, read by
// run.py. Two line kinds:
//   sweep <op> <body> <cases> <mismatches> <first mismatching case or -1> ok|FAIL
//     seeded random shapes and parameters, the body's status, output (and any state the op
//     updates) compared byte for byte with the scalar body's on the same inputs;
//   variant <case> <body> <instructions per call> <work> <crc32 or -> ok|error
//     a fixed shape, the body's instructions per call (work: MACs or output elements, 0 when
//     not given) and the CRC of its output ("-" when the bodies' inputs differ, e.g. a state
//     refilled per body, so the CRCs are not comparable).
#ifndef MICA_BENCH_TARGET_REPORT_H_
#define MICA_BENCH_TARGET_REPORT_H_

#include <stddef.h>
#include <stdint.h>

extern "C" void bench_puts(const char* s);

namespace bench_report {

inline void PutStr(char*& p, const char* s) {
  while (*s) *p++ = *s++;
}
inline void PutDec(char*& p, int64_t v) {
  if (v < 0) *p++ = '-', v = -v;
  char tmp[24];
  int n = 0;
  do {
    tmp[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v);
  while (n) *p++ = tmp[--n];
}
inline void PutHex(char*& p, uint32_t v) {
  for (int i = 7; i >= 0; --i) *p++ = "0123456789abcdef"[(v >> (4 * i)) & 0xF];
}
inline uint32_t Crc32(const void* data, size_t n) {
  const uint8_t* b = static_cast<const uint8_t*>(data);
  uint32_t crc = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; ++i) {
    crc ^= b[i];
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

inline void Sweep(const char* op, const char* body, int64_t cases, int64_t mismatches,
                  int64_t first) {
  char line[160];
  char* p = line;
  PutStr(p, "sweep ");
  PutStr(p, op);
  *p++ = ' ';
  PutStr(p, body);
  *p++ = ' ';
  PutDec(p, cases);
  *p++ = ' ';
  PutDec(p, mismatches);
  *p++ = ' ';
  PutDec(p, first);
  PutStr(p, mismatches == 0 ? " ok\n" : " FAIL\n");
  *p = 0;
  bench_puts(line);
}

// name_a and name_b are joined with '_' (name_b may be null).
inline void Variant(const char* name_a, const char* name_b, const char* body,
                    uint64_t instructions, uint64_t work, bool has_crc, uint32_t crc, bool ok) {
  char line[192];
  char* p = line;
  PutStr(p, "variant ");
  PutStr(p, name_a);
  if (name_b != nullptr) {
    *p++ = '_';
    PutStr(p, name_b);
  }
  *p++ = ' ';
  PutStr(p, body);
  *p++ = ' ';
  PutDec(p, static_cast<int64_t>(instructions));
  *p++ = ' ';
  PutDec(p, static_cast<int64_t>(work));
  *p++ = ' ';
  if (has_crc) {
    PutHex(p, crc);
  } else {
    *p++ = '-';
  }
  PutStr(p, ok ? " ok\n" : " error\n");
  *p = 0;
  bench_puts(line);
}

// BENCH_ONLY="case": run that one case only (profile.py traces it).
inline bool Selected(const char* name) {
#ifdef BENCH_ONLY
  const char* want = BENCH_ONLY;
  while (*want != 0 && *want == *name) ++want, ++name;
  return *want == 0 && *name == 0;
#else
  (void)name;
  return true;
#endif
}

}  // namespace bench_report

#endif  // MICA_BENCH_TARGET_REPORT_H_
