#include "semihost.h"

namespace mica {
namespace fw {
namespace {

int32_t Call(int32_t op, void* arg) {
  register int32_t r0 __asm__("r0") = op;
  register void* r1 __asm__("r1") = arg;
  __asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}

int32_t g_stdout = -1;
char g_buf[256];
size_t g_len = 0;

void Flush() {
  if (g_len == 0) return;
  if (g_stdout < 0) {
    static const char kTt[] = ":tt";
    uint32_t args[3] = {reinterpret_cast<uint32_t>(kTt), 4, 3};  // mode 4: "w"
    g_stdout = Call(0x01, args);                                  // SYS_OPEN
  }
  uint32_t args[3] = {static_cast<uint32_t>(g_stdout), reinterpret_cast<uint32_t>(g_buf),
                      static_cast<uint32_t>(g_len)};
  Call(0x05, args);  // SYS_WRITE
  g_len = 0;
}

}  // namespace

void Write(const char* s, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    g_buf[g_len++] = s[i];
    if (g_len == sizeof(g_buf) || s[i] == '\n') Flush();
  }
}

void Puts(const char* s) {
  size_t n = 0;
  while (s[n] != '\0') ++n;
  Write(s, n);
}

void PutU(uint64_t v) {
  char d[24];
  int n = 0;
  do {
    d[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  char out[24];
  for (int i = 0; i < n; ++i) out[i] = d[n - 1 - i];
  Write(out, static_cast<size_t>(n));
}

void PutI(int64_t v) {
  if (v < 0) {
    Write("-", 1);
    PutU(static_cast<uint64_t>(-(v + 1)) + 1);
  } else {
    PutU(static_cast<uint64_t>(v));
  }
}

void PutHexBytes(const uint8_t* p, size_t n) {
  static const char kHex[] = "0123456789abcdef";
  for (size_t i = 0; i < n; ++i) {
    const char c[2] = {kHex[p[i] >> 4], kHex[p[i] & 15]};
    Write(c, 2);
  }
}

void Exit(int status) {
  Flush();
  uint32_t args[2] = {0x20026, static_cast<uint32_t>(status)};  // ADP_Stopped_ApplicationExit
  Call(0x20, args);                                               // SYS_EXIT_EXTENDED
  for (;;) {
  }
}

}  // namespace fw
}  // namespace mica
