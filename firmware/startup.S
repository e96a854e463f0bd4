/* mica runner start-up for QEMU's MPS2/MPS3 boards: vector table, reset handler (FPU/MVE
   enabled in assembly before any C runs, .data copied, .bss cleared), fault handler that
   reports through semihosting and exits with status 3. */
  .syntax unified
  .thumb

  .section .vectors, "a"
  .align 2
  .global __vectors
__vectors:
  .word __stack_top
  .word Reset_Handler
  .rept 14
  .word Fault_Handler
  .endr

  .text
  .thumb_func
  .global Reset_Handler
Reset_Handler:
  /* CPACR: full access to CP10/CP11 (FPU and MVE). */
  ldr r0, =0xE000ED88
  ldr r1, [r0]
  orr r1, r1, #(0xF << 20)
  str r1, [r0]
  dsb
  isb
  /* .data: copy from its load address. */
  ldr r0, =__data_load
  ldr r1, =__data_start
  ldr r2, =__data_end
1:
  cmp r1, r2
  bhs 2f
  ldr r3, [r0], #4
  str r3, [r1], #4
  b 1b
2:
  /* .bss: clear. */
  ldr r1, =__bss_start
  ldr r2, =__bss_end
  movs r3, #0
3:
  cmp r1, r2
  bhs 4f
  str r3, [r1], #4
  b 3b
4:
  bl main
  bl mica_exit
5:
  b 5b

  .thumb_func
  .global Fault_Handler
Fault_Handler:
  mov r0, sp              /* the stacked exception frame: r0-r3, r12, lr, pc, xpsr */
  ldr r1, =__stack_top
  mov sp, r1
  bl mica_fault
6:
  b 6b
