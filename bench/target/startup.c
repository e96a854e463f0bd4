/* Bare-metal start-up for the QEMU MPS2 / MPS3 boards of the target benchmark: vector table,
 * FPU / MVE enable, .data / .bss set-up, semihosting console and exit. Interrupts stay off so
 * nothing runs inside a measured region. */
#include <stddef.h>
#include <stdint.h>

extern uint32_t __stack_top, __data_load, __data_start, __data_end, __bss_start, __bss_end;
int main(void);
__attribute__((noreturn)) void bench_exit(int status);

static int semihost(int op, void* arg) {
  register int r0 __asm("r0") = op;
  register void* r1 __asm("r1") = arg;
  __asm volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}

void bench_puts(const char* s) { semihost(0x04 /* SYS_WRITE0 */, (void*)s); }

__attribute__((noreturn)) void bench_exit(int status) {
  uint32_t block[2] = {0x20026u /* ADP_Stopped_ApplicationExit */, (uint32_t)status};
  semihost(0x20 /* SYS_EXIT_EXTENDED */, block);
  for (;;) {
  }
}

__attribute__((used, noreturn)) void bench_c_start(void) {
  const uint32_t* src = &__data_load;
  for (uint32_t* d = &__data_start; d < &__data_end;) *d++ = *src++;
  for (uint32_t* b = &__bss_start; b < &__bss_end;) *b++ = 0;
  bench_exit(main());
}

/* CPACR: full access to CP10 / CP11 (FPU and MVE) before any C code may use them. */
__attribute__((naked, noreturn)) void Reset_Handler(void) {
  __asm volatile(
      "ldr r0, =0xE000ED88\n"
      "ldr r1, [r0]\n"
      "orr r1, r1, #(0xF << 20)\n"
      "str r1, [r0]\n"
      "dsb\n"
      "isb\n"
      "b bench_c_start\n");
}

__attribute__((noreturn)) void Fault_Handler(void) {
  bench_puts("bench: fault\n");
  bench_exit(99);
}

__attribute__((section(".vectors"), used)) const void* const bench_vectors[16] = {
    &__stack_top,          (void*)Reset_Handler, (void*)Fault_Handler, (void*)Fault_Handler,
    (void*)Fault_Handler,  (void*)Fault_Handler, (void*)Fault_Handler, 0,
    0,                     0,                    0,                    (void*)Fault_Handler,
    (void*)Fault_Handler,  0,                    (void*)Fault_Handler, (void*)Fault_Handler};

/* newlib's syscall stubs are not linked (-nostartfiles, no nosys): the few it may want. */
void _exit(int status) { bench_exit(status); }
