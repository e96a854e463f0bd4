// Semihosting output and exit for the mica runner (QEMU: -semihosting-config
// enable=on,target=native).
#ifndef MICA_FIRMWARE_SEMIHOST_H_
#define MICA_FIRMWARE_SEMIHOST_H_

#include <cstddef>
#include <cstdint>

namespace mica {
namespace fw {

void Write(const char* s, size_t n);
void Puts(const char* s);  // no newline added
void PutU(uint64_t v);
void PutI(int64_t v);
void PutHexBytes(const uint8_t* p, size_t n);
[[noreturn]] void Exit(int status);

}  // namespace fw
}  // namespace mica

#endif  // MICA_FIRMWARE_SEMIHOST_H_
