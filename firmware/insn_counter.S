/* mica_insn_now(): the exact instruction clock of ../shared/docs/qemu-cortex-m.md (QEMU
   -icount shift=0): reads the FPGAIO COUNTER P times at instruction offsets 0, 2, ..., P-2,
   P+1, P+3, ..., 2P-1 (a complete residue system modulo the counter period P, in
   instructions) and returns the sum, which by Hermite's identity is the virtual time of the
   first read plus a constant. Differences of two calls are exact instruction counts (modulo
   2^32) of what ran between them plus a constant the caller calibrates. */
  .syntax unified
  .thumb
  .text

#ifndef MICA_COUNTER_ADDR
#error "MICA_COUNTER_ADDR (FPGAIO COUNTER register) must be defined"
#endif
#ifndef MICA_COUNTER_PERIOD
#error "MICA_COUNTER_PERIOD (instructions per counter tick) must be defined"
#endif

  .macro MICA_READS n
  .rept \n
  ldr r2, [r0]
  adds r1, r1, r2
  .endr
  .endm

  .align 2
  .thumb_func
  .global mica_insn_now
mica_insn_now:
  ldr r0, =MICA_COUNTER_ADDR
  movs r1, #0
  MICA_READS (MICA_COUNTER_PERIOD / 2)
  nop
  MICA_READS (MICA_COUNTER_PERIOD / 2)
  mov r0, r1
  bx lr
  .ltorg
